-- Fewer b-tree pages written per placement. Owned by the sessions,
-- server-process and search areas.
--
-- A compute's live sessions were keyed with their status, so an
-- activation moved its session's entry from the compute's ACTIVATING
-- range to its ACTIVE range: two pages. Keyed without it, and holding
-- only live sessions (what every query of it asks for, written exactly
-- as they write it), an activation rewrites the entry where it is.
DROP INDEX game_sessions_compute;
CREATE INDEX game_sessions_compute ON game_sessions (fleet_id, compute) WHERE status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING');
-- A claim set the process's game session, a key column of the index of
-- free processes: its entry moved from the free range to the session's.
-- The index now holds the free processes alone, and a claim only takes
-- the entry out.
DROP INDEX processes_free;
CREATE INDEX processes_free ON processes (fleet_id, location, created) WHERE status = 'ACTIVE' AND game_session_id = '';
-- On SQLite the live sessions in memory answer every search of a fleet;
-- the store's own search reads a fleet's ACTIVE sessions from
-- game_sessions_search_created, and filters a location there. An
-- activation no longer enters a second search index.
DROP INDEX game_sessions_search_location;
-- The store's own search reads from game_sessions_fleet_status_created,
-- whose entries of a fleet's ACTIVE sessions are those of
-- game_sessions_search_created, in the same order: every activation
-- wrote both.
DROP INDEX game_sessions_search_created;
-- A live session has no end time and (most) no creator: every new
-- session entered the indexes of both. The queries that read them ask
-- for an end time in a window (the metrics) and for one creator's
-- sessions (the creation limit), and spell out what the partial indexes
-- hold.
DROP INDEX game_sessions_fleet_ended;
CREATE INDEX game_sessions_fleet_ended ON game_sessions (fleet_id, ended) WHERE ended > 0;
DROP INDEX game_sessions_creator;
CREATE INDEX game_sessions_creator ON game_sessions (fleet_id, creator_id, created) WHERE creator_id <> '';
