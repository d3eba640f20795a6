-- Queue metrics and the console's placement lists. ended is when a
-- placement reached its final status (epoch milliseconds, 0 while
-- PENDING), so outcomes are counted per minute from the records on any
-- node. Owned by the queue observability area.
ALTER TABLE placements ADD COLUMN ended BIGINT NOT NULL DEFAULT 0;
CREATE INDEX placements_queue_started ON placements (queue, started);
CREATE INDEX placements_queue_ended ON placements (queue, ended);
CREATE INDEX placements_status_started ON placements (status, started);
