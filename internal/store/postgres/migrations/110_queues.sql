-- Game session queues and placements. Owned by the queues area. A
-- placement's game_session_id is its provisional (while PENDING) or final
-- game session; deadline is when a PENDING placement times out.
CREATE TABLE game_session_queues (
    name    TEXT PRIMARY KEY,
    created BIGINT NOT NULL,
    doc     TEXT NOT NULL
);
CREATE TABLE placements (
    id              TEXT PRIMARY KEY,
    queue           TEXT NOT NULL,
    status          TEXT NOT NULL,
    game_session_id TEXT NOT NULL DEFAULT '',
    started         BIGINT NOT NULL,
    deadline        BIGINT NOT NULL,
    doc             TEXT NOT NULL
);
CREATE INDEX placements_pending ON placements (started, id) WHERE status = 'PENDING';
CREATE INDEX placements_deadline ON placements (deadline) WHERE status = 'PENDING';
CREATE INDEX placements_session ON placements (game_session_id) WHERE status = 'PENDING';
