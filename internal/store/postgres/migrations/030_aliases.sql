-- Aliases. Owned by the aliases area.
CREATE TABLE aliases (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    routing_type TEXT NOT NULL,
    fleet_id     TEXT NOT NULL,
    created      BIGINT NOT NULL,
    doc          TEXT NOT NULL
);
CREATE INDEX aliases_created ON aliases (created, id);
CREATE INDEX aliases_fleet ON aliases (fleet_id);
