-- Container group definitions. Owned by the containers area. A name keeps
-- its type and the last version number it gave out (numbers are never
-- reused); each version is a JSON document.
CREATE TABLE container_groups (
    name         TEXT PRIMARY KEY,
    group_type   TEXT NOT NULL,
    created      BIGINT NOT NULL,
    last_version INTEGER NOT NULL
);
CREATE TABLE container_group_versions (
    name     TEXT NOT NULL,
    version  INTEGER NOT NULL,
    created  BIGINT NOT NULL,
    doc      TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
