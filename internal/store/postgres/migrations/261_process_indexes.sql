-- Fewer index entries per write of a server process, and room on its
-- pages (see migration 260). Owned by the server-process area.
--
-- The free processes alone: a claim takes the entry out instead of
-- writing one in the session's range, and a busy process's writes enter
-- it no more.
DROP INDEX processes_free;
CREATE INDEX processes_free ON processes (fleet_id, location, created) WHERE status = 'ACTIVE' AND game_session_id = '';
-- End times: only ended processes have one, and the metrics that read
-- them ask for a window of them (ended > 0 spelled out in the query).
DROP INDEX processes_ended;
CREATE INDEX processes_ended ON processes (fleet_id, ended) WHERE ended > 0;
-- Room on each page of server processes for the new versions of its
-- rows, so an update that changes no indexed column (a heartbeat, a
-- health report, a token's refresh) stays on its page and writes no
-- index entry. It applies to the pages written from now on. The writes of
-- a placement to game_sessions and placements each change an indexed
-- column (a status, the seat count, the placement's session, an end
-- time), so room left on their pages would only be room unused.
ALTER TABLE processes SET (fillfactor = 80);
