-- Which node owns each fleet, when several nodes share the store: the
-- owner makes every decision for the fleet, and a write for the fleet from
-- any other node is refused. epoch grows by one each time the lease moves.
-- owns_fleets: the node takes part in fleet ownership (older nodes do not,
-- and ownership stays off while one of them is live). Owned by the
-- several-nodes area.
CREATE TABLE fleet_owners (
    fleet_id TEXT PRIMARY KEY,
    node_id  TEXT NOT NULL,
    epoch    BIGINT NOT NULL
);
CREATE INDEX fleet_owners_node ON fleet_owners (node_id);
ALTER TABLE nodes ADD COLUMN owns_fleets INTEGER NOT NULL DEFAULT 0;
