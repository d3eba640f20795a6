-- Fleet metrics. When a process became ACTIVE and ended (and whether it
-- ended abnormally), when a player session became ACTIVE, and why a game
-- session ended: the transitions the per-minute metrics count
-- (semantics.md §7.6). Epoch milliseconds, 0 while it has not happened.
-- Owned by the metrics area.
ALTER TABLE processes ADD COLUMN activated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE processes ADD COLUMN ended BIGINT NOT NULL DEFAULT 0;
ALTER TABLE processes ADD COLUMN abnormal INTEGER NOT NULL DEFAULT 0;
CREATE INDEX processes_activated ON processes (fleet_id, activated);
CREATE INDEX processes_ended ON processes (fleet_id, ended);
ALTER TABLE player_sessions ADD COLUMN activated BIGINT NOT NULL DEFAULT 0;
CREATE INDEX player_sessions_activated ON player_sessions (activated);
ALTER TABLE game_sessions ADD COLUMN reason TEXT NOT NULL DEFAULT '';
CREATE INDEX game_sessions_fleet_ended ON game_sessions (fleet_id, ended);
-- One row per resource (a fleet id; queues later), location ('' when the
-- resource has none) and minute (epoch milliseconds of its start): the
-- metrics of that minute as a JSON object of name → value. Written once,
-- by whichever node gets there first; deleted after the retention period.
CREATE TABLE metric_minutes (
    resource TEXT NOT NULL,
    location TEXT NOT NULL,
    minute   BIGINT NOT NULL,
    doc      TEXT NOT NULL,
    PRIMARY KEY (resource, location, minute)
);
CREATE INDEX metric_minutes_minute ON metric_minutes (minute);
