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
