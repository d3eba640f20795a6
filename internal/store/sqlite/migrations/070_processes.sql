-- Server processes, known by (fleet, compute, pID). game_session_id is the
-- session the process hosts (one in its life); '' while free. Owned by
-- the server-process area.
CREATE TABLE processes (
    fleet_id        TEXT NOT NULL,
    compute         TEXT NOT NULL,
    pid             TEXT NOT NULL,
    location        TEXT NOT NULL,
    status          TEXT NOT NULL,
    healthy         INTEGER NOT NULL,
    connected       INTEGER NOT NULL,
    game_session_id TEXT NOT NULL DEFAULT '',
    last_heartbeat  BIGINT NOT NULL DEFAULT 0,
    disconnected_at BIGINT NOT NULL DEFAULT 0,
    token_expires   BIGINT NOT NULL DEFAULT 0,
    created         BIGINT NOT NULL,
    doc             TEXT NOT NULL,
    PRIMARY KEY (fleet_id, compute, pid)
);
CREATE INDEX processes_free ON processes (fleet_id, location, status, game_session_id, created);
CREATE INDEX processes_status ON processes (status, connected);
