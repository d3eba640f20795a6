-- The activation timer looks for ACTIVATING sessions by age across all
-- fleets every second: a small partial index keeps that off the table.
CREATE INDEX game_sessions_activating ON game_sessions (created) WHERE status = 'ACTIVATING';
