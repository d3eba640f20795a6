-- Game sessions and their properties (one row per property, for search),
-- and player sessions. cur_players counts RESERVED + ACTIVE player sessions
-- and is kept in the same transaction as every seat change. Times are epoch
-- milliseconds. Owned by the sessions area.
CREATE TABLE game_sessions (
    pk          INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    fleet_id    TEXT NOT NULL,
    id_string   TEXT NOT NULL,
    location    TEXT NOT NULL,
    compute     TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    max_players INTEGER NOT NULL,
    cur_players INTEGER NOT NULL DEFAULT 0,
    policy      TEXT NOT NULL,
    creator_id  TEXT NOT NULL DEFAULT '',
    created     BIGINT NOT NULL,
    ended       BIGINT NOT NULL DEFAULT 0,
    doc         TEXT NOT NULL,
    UNIQUE (fleet_id, id_string)
);
CREATE INDEX game_sessions_fleet_status_created ON game_sessions (fleet_id, status, created, pk);
CREATE INDEX game_sessions_fleet_created ON game_sessions (fleet_id, created, pk);
CREATE INDEX game_sessions_creator ON game_sessions (fleet_id, creator_id, created);
CREATE TABLE game_session_properties (
    session_pk BIGINT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_pk, key)
);
CREATE INDEX game_session_properties_kv ON game_session_properties (key, value, session_pk);
CREATE TABLE player_sessions (
    id              TEXT PRIMARY KEY,
    game_session_id TEXT NOT NULL,
    player_id       TEXT NOT NULL,
    status          TEXT NOT NULL,
    created         BIGINT NOT NULL,
    doc             TEXT NOT NULL
);
CREATE INDEX player_sessions_game ON player_sessions (game_session_id, created, id);
CREATE INDEX player_sessions_player ON player_sessions (player_id, created, id);
CREATE INDEX player_sessions_status_created ON player_sessions (status, created);
