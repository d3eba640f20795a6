-- FlexMatch rule sets. Owned by the matchmaking area. The body is kept
-- byte for byte as submitted.
CREATE TABLE matchmaking_rule_sets (
    name     TEXT PRIMARY KEY,
    created  BIGINT NOT NULL,
    body     TEXT NOT NULL
);
CREATE INDEX matchmaking_rule_sets_created ON matchmaking_rule_sets (created, name);
