-- Registered computes and their auth tokens (stored as SHA-256 hashes).
-- Owned by the computes area.
CREATE TABLE computes (
    fleet_id TEXT NOT NULL,
    name     TEXT NOT NULL,
    location TEXT NOT NULL,
    status   TEXT NOT NULL,
    created  BIGINT NOT NULL,
    doc      TEXT NOT NULL,
    PRIMARY KEY (fleet_id, name)
);
CREATE INDEX computes_fleet_location ON computes (fleet_id, location, name);
CREATE TABLE auth_tokens (
    hash         TEXT PRIMARY KEY,
    fleet_id     TEXT NOT NULL,
    compute_name TEXT NOT NULL,
    expires      BIGINT NOT NULL,
    created      BIGINT NOT NULL
);
CREATE INDEX auth_tokens_compute ON auth_tokens (fleet_id, compute_name, expires);
CREATE INDEX auth_tokens_expires ON auth_tokens (expires);
