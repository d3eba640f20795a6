-- Resource tags, keyed by ARN. Owned by the tags area.
CREATE TABLE tags (
    arn   TEXT NOT NULL,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (arn, key)
);
