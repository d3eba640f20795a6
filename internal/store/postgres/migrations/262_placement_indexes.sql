-- Fewer index entries per write of a placement (see migration 260): only
-- ended placements have an end time, and the queue metrics that read it
-- ask for a window of them (ended > 0 spelled out in the query). A pending
-- placement's writes enter this index no more. Owned by the queues area.
DROP INDEX placements_queue_ended;
CREATE INDEX placements_queue_ended ON placements (queue, ended) WHERE ended > 0;
