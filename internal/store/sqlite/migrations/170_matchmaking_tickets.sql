-- FlexMatch configurations, tickets and matches. Owned by the matchmaking
-- area. Records are JSON in doc; what is queried is also a column.
CREATE TABLE matchmaking_configurations (
    name     TEXT PRIMARY KEY,
    created  BIGINT NOT NULL,
    rule_set TEXT NOT NULL,
    doc      TEXT NOT NULL
);
CREATE INDEX matchmaking_configurations_created ON matchmaking_configurations (created, name);
CREATE TABLE matchmaking_tickets (
    id       TEXT PRIMARY KEY,
    config   TEXT NOT NULL,
    status   TEXT NOT NULL,
    started  BIGINT NOT NULL,
    deadline BIGINT NOT NULL,
    ended    BIGINT NOT NULL DEFAULT 0,
    doc      TEXT NOT NULL
);
CREATE INDEX matchmaking_tickets_ended ON matchmaking_tickets (ended) WHERE ended > 0;
CREATE INDEX matchmaking_tickets_pool ON matchmaking_tickets (config, status, started, id);
CREATE INDEX matchmaking_tickets_deadline ON matchmaking_tickets (config, status, deadline);
CREATE TABLE matchmaking_ticket_players (
    player_id TEXT NOT NULL,
    ticket_id TEXT NOT NULL,
    PRIMARY KEY (player_id, ticket_id)
);
CREATE TABLE matchmaking_matches (
    id       TEXT PRIMARY KEY,
    config   TEXT NOT NULL,
    status   TEXT NOT NULL,
    deadline BIGINT NOT NULL,
    doc      TEXT NOT NULL
);
CREATE INDEX matchmaking_matches_due ON matchmaking_matches (config, status, deadline);
CREATE TABLE matchmaking_leases (
    config TEXT PRIMARY KEY,
    owner  TEXT NOT NULL,
    expires BIGINT NOT NULL
);
