-- On SQLite every search of a fleet by id or alias is answered by the live
-- sessions in memory (docs/architecture.md), so the search indexes keyed on
-- the seat count served no query of the service, while every reservation,
-- acceptance and release rewrote their entries: two or three b-tree pages
-- more for SQLite to write at each seat change. The store's own search
-- (kept for the store contract) reads the fleet's ACTIVE sessions in
-- creation order from game_sessions_search_created instead. PostgreSQL,
-- whose nodes search the fleets they do not own in the store, keeps them.
-- Owned by the search area.
DROP INDEX game_sessions_search_open;
DROP INDEX game_sessions_search_players;
DROP INDEX game_sessions_search_open_players;
-- A new player session (RESERVED, never activated) entered the indexes of
-- activation times and of statuses too; only the metrics (activated
-- sessions of a window) and the reservation timeout (RESERVED ones) read
-- them. As partial indexes they hold only those rows: a reservation
-- writes neither the activation index nor, once accepted, the status one.
-- Owned by the sessions area.
DROP INDEX player_sessions_activated;
CREATE INDEX player_sessions_activated ON player_sessions (activated) WHERE activated > 0;
DROP INDEX player_sessions_status_created;
CREATE INDEX player_sessions_reserved ON player_sessions (created) WHERE status = 'RESERVED';
