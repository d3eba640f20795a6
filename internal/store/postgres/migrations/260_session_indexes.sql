-- Fewer index entries per write of a game session, a server process or a
-- placement (migrations 260 to 262, one table each, so that each table's
-- writers wait only for its own indexes' rebuild). Owned by the sessions
-- and search areas.
--
-- PostgreSQL writes an update without touching any index (HOT) only when
-- no column any index reads (key, expression or partial condition)
-- changes, and the row's page has room for the new version; otherwise the
-- new version gets an entry in every index whose condition it meets. Each
-- index below is narrowed to the rows its queries ask for, spelled out in
-- those queries, so the writes of a placement enter fewer of them.
-- Each CREATE INDEX reads the whole table while the table's writers (the
-- nodes of an earlier build, during a rolling upgrade) wait for this
-- transaction.
--
-- A compute's sessions: the index now holds the live ones alone (what
-- every query of it asks for, written exactly as they write it), so an
-- ended session's writes leave it. Still keyed with the status, unlike
-- SQLite's (its migration 250): here an activation writes a new entry
-- whatever the key, and the count of a compute's ACTIVATING sessions is
-- read from the index alone.
DROP INDEX game_sessions_compute;
CREATE INDEX game_sessions_compute ON game_sessions (fleet_id, compute, status) WHERE status IN ('ACTIVATING', 'ACTIVE', 'TERMINATING');
-- A fleet's ACTIVE sessions in creation order are read from
-- game_sessions_fleet_status_created, whose entries with status ACTIVE
-- are those of this index in the same order: every activation, seat
-- change and end wrote both.
DROP INDEX game_sessions_search_created;
-- A live session has no end time and (most) no creator: every write of
-- one entered the indexes of both. Their queries ask for an end time in a
-- window (the metrics) and for one creator's sessions (the creation
-- limit), and spell out what the partial indexes hold.
DROP INDEX game_sessions_fleet_ended;
CREATE INDEX game_sessions_fleet_ended ON game_sessions (fleet_id, ended) WHERE ended > 0;
DROP INDEX game_sessions_creator;
CREATE INDEX game_sessions_creator ON game_sessions (fleet_id, creator_id, created) WHERE creator_id <> '';
