-- Custom locations. Owned by the locations area.
CREATE TABLE locations (
    name    TEXT PRIMARY KEY,
    arn     TEXT NOT NULL,
    created BIGINT NOT NULL
);
