-- When a player session left RESERVED/ACTIVE (epoch milliseconds; 0 while
-- it holds a seat). Like status, this column wins over doc on read, so
-- bulk transitions (timeouts, a game session ending) are single UPDATEs.
-- Owned by the sessions area.
ALTER TABLE player_sessions ADD COLUMN ended BIGINT NOT NULL DEFAULT 0;
CREATE INDEX game_sessions_compute ON game_sessions (fleet_id, compute, status);
