-- The processes not ended but marked disconnected: those a node may find
-- stranded (StrandedProcesses). Nearly always none, so the sweep that
-- looks for them every second asks this index first instead of joining
-- every holder record with its process. A process enters it only when it
-- disconnects, and leaves it when it reconnects or ends. Owned by the
-- several-nodes area.
CREATE INDEX processes_disconnected ON processes (fleet_id, compute, pid) WHERE connected = 0 AND status <> 'TERMINATED';
