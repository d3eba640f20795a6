-- Nodes sharing the store, and which node holds each server process's
-- connection. heartbeat is epoch milliseconds by the database's clock.
-- Owned by the several-nodes area.
CREATE TABLE nodes (
    id        TEXT PRIMARY KEY,
    address   TEXT NOT NULL,
    started   BIGINT NOT NULL,
    heartbeat BIGINT NOT NULL,
    draining  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE process_holders (
    fleet_id TEXT NOT NULL,
    compute  TEXT NOT NULL,
    pid      TEXT NOT NULL,
    node_id  TEXT NOT NULL,
    PRIMARY KEY (fleet_id, compute, pid)
);
CREATE INDEX process_holders_node ON process_holders (node_id);
