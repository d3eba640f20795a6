-- Indexes for SearchGameSessions, which only ever reads ACTIVE sessions of
-- one fleet: partial indexes, so ended sessions cost them nothing. Owned by
-- the search area. The expression (cur_players < max_players) is
-- hasAvailablePlayerSessions, written exactly as the search query writes it.
CREATE INDEX game_sessions_search_created ON game_sessions (fleet_id, created, pk) WHERE status = 'ACTIVE';
CREATE INDEX game_sessions_search_open ON game_sessions (fleet_id, (cur_players < max_players), created, pk) WHERE status = 'ACTIVE';
CREATE INDEX game_sessions_search_players ON game_sessions (fleet_id, cur_players, created, pk) WHERE status = 'ACTIVE';
CREATE INDEX game_sessions_search_open_players ON game_sessions (fleet_id, (cur_players < max_players), cur_players, created, pk) WHERE status = 'ACTIVE';
CREATE INDEX game_sessions_search_location ON game_sessions (fleet_id, location, created, pk) WHERE status = 'ACTIVE';
-- Property values are compared and sorted in byte order (COLLATE "C"), as
-- SQLite does, whatever the database's collation.
CREATE INDEX game_session_properties_kv_c ON game_session_properties (key, value COLLATE "C", session_pk);
