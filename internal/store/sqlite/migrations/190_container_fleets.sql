-- Container fleets are fleets: the fleets table says which kind each is,
-- and fleet_container_groups which container group definitions (at which
-- version) each container fleet runs. Owned by the fleets area.
ALTER TABLE fleets ADD COLUMN compute_type TEXT NOT NULL DEFAULT 'ANYWHERE';
CREATE TABLE fleet_container_groups (
    fleet_id TEXT NOT NULL,
    name     TEXT NOT NULL,
    version  INTEGER NOT NULL,
    PRIMARY KEY (fleet_id, name)
);
CREATE INDEX fleet_container_groups_name ON fleet_container_groups (name, version);
