-- The processes not ended but marked disconnected: those a node may find
-- stranded (StrandedProcesses). Nearly always none, so the sweep that
-- looks for them after every heartbeat asks this index first instead of
-- reading every process the node holds (about 10 ms a run at 100,000
-- processes). A process enters it only when it disconnects, and leaves it
-- when it reconnects or ends; a claim's conditions (connected = 1) never
-- match it. Owned by the several-nodes area.
CREATE INDEX processes_disconnected ON processes (fleet_id, compute, pid) WHERE connected = 0 AND status <> 'TERMINATED';
