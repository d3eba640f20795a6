-- End times: only ended server processes and placements have one, and the
-- metrics that read them ask for a window of them (ended > 0 spelled out
-- in their queries, as SQLite needs it to use a partial index). A live
-- process's or a pending placement's writes enter these indexes no more.
-- The same change as PostgreSQL's migrations 261 and 262. Owned by the
-- server-process and queues areas.
DROP INDEX processes_ended;
CREATE INDEX processes_ended ON processes (fleet_id, ended) WHERE ended > 0;
DROP INDEX placements_queue_ended;
CREATE INDEX placements_queue_ended ON placements (queue, ended) WHERE ended > 0;
