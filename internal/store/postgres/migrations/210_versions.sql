-- Each game session and server process row counts its writes: every write
-- that changes the row sets version = version + 1 and reports it to the
-- commit feed, so that a memory fed by commits that reach it out of order
-- (PostgreSQL commits on many connections at once) keeps the newest.
-- Owned by the sessions and server-process areas.
ALTER TABLE game_sessions ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE processes ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
