-- Fleets (the record as JSON in doc; columns for what is queried) and the
-- locations each uses. Owned by the fleets area.
CREATE TABLE fleets (
    id      TEXT PRIMARY KEY,
    name    TEXT NOT NULL,
    status  TEXT NOT NULL,
    created BIGINT NOT NULL,
    doc     TEXT NOT NULL
);
CREATE INDEX fleets_created ON fleets (created, id);
CREATE TABLE fleet_locations (
    fleet_id TEXT NOT NULL,
    location TEXT NOT NULL,
    PRIMARY KEY (fleet_id, location)
);
CREATE INDEX fleet_locations_location ON fleet_locations (location);
-- Fleet events, newest last; seq orders events of the same millisecond.
CREATE TABLE fleet_events (
    seq      INTEGER PRIMARY KEY,
    id       TEXT NOT NULL UNIQUE,
    fleet_id TEXT NOT NULL,
    time     BIGINT NOT NULL,
    doc      TEXT NOT NULL
);
CREATE INDEX fleet_events_fleet_time ON fleet_events (fleet_id, time, seq);
