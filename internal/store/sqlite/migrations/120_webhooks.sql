-- Webhook delivery state of outbox notifications. Owned by the events area.
-- webhook_cursor holds one row: the outbox seq up to which notifications
-- have been considered for delivery.
CREATE TABLE webhook_cursor (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO webhook_cursor (id, seq) VALUES (1, 0);
-- One row per notification with a webhook target; state 0 pending,
-- 1 delivered, 2 failed. owner/lease_until: the claiming deliverer.
CREATE TABLE webhook_deliveries (
    seq         BIGINT PRIMARY KEY,
    target      TEXT NOT NULL,
    state       INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     BIGINT NOT NULL,
    owner       TEXT NOT NULL DEFAULT '',
    lease_until BIGINT NOT NULL DEFAULT 0,
    last_error  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
