-- Subscriber notifications (placement and matchmaking events), tailed by
-- seq. Owned by the outbox area.
CREATE TABLE outbox (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    id       TEXT NOT NULL UNIQUE,
    time     BIGINT NOT NULL,
    type     TEXT NOT NULL,
    resource TEXT NOT NULL,
    target   TEXT NOT NULL,
    envelope TEXT NOT NULL
);
CREATE INDEX outbox_time ON outbox (time);
