package game

import "time"

// FleetMetrics is one fleet's metrics in one of its locations, by
// GameLift's CloudWatch definitions. A compute
// counts as an instance. The gauges are the state at the time of
// measurement; the transition counts (activations, terminations,
// interruptions) cover one window, a minute in the history and on
// /metrics.
type FleetMetrics struct {
	FleetID  string
	Location string

	ActiveInstances int // registered computes
	IdleInstances   int // computes hosting no live game session

	ActiveServerProcesses  int // ACTIVE processes, idle or hosting
	HealthyServerProcesses int // ACTIVE and healthy

	ActivatingGameSessions int
	ActiveGameSessions     int
	// AvailableGameSessions counts ACTIVE, healthy, connected processes
	// hosting nothing; ConcurrentActivatableGameSessions is the part of
	// those that can start a session now under the fleet's
	// MaxConcurrentGameSessionActivations.
	AvailableGameSessions             int
	ConcurrentActivatableGameSessions int
	CurrentPlayerSessions             int // RESERVED + ACTIVE

	// Transitions in the window.
	ServerProcessActivations          int // became ACTIVE
	ServerProcessTerminations         int // became TERMINATED
	ServerProcessAbnormalTerminations int // ended crashed, lost or unhealthy
	PlayerSessionActivations          int // RESERVED → ACTIVE
	GameSessionInterruptions          int // ended INTERRUPTED
}

// percent is 100·n/d, 0 when d is 0.
func percent(n, d int) float64 {
	if d <= 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// PercentIdleInstances is IdleInstances / ActiveInstances, in percent.
func (m FleetMetrics) PercentIdleInstances() float64 {
	return percent(m.IdleInstances, m.ActiveInstances)
}

// PercentHealthyServerProcesses is Healthy / Active, in percent.
func (m FleetMetrics) PercentHealthyServerProcesses() float64 {
	return percent(m.HealthyServerProcesses, m.ActiveServerProcesses)
}

// PercentAvailableGameSessions is Available / (Active game sessions +
// Available + unhealthy processes), in percent.
func (m FleetMetrics) PercentAvailableGameSessions() float64 {
	unhealthy := m.ActiveServerProcesses - m.HealthyServerProcesses
	return percent(m.AvailableGameSessions, m.ActiveGameSessions+m.AvailableGameSessions+unhealthy)
}

// FleetMetricNames lists the metrics of Values in display order.
var FleetMetricNames = []string{
	"ActiveInstances", "IdleInstances", "PercentIdleInstances",
	"ActiveServerProcesses", "HealthyServerProcesses", "PercentHealthyServerProcesses",
	"ServerProcessActivations", "ServerProcessTerminations", "ServerProcessAbnormalTerminations",
	"ActivatingGameSessions", "ActiveGameSessions", "AvailableGameSessions",
	"PercentAvailableGameSessions", "ConcurrentActivatableGameSessions", "GameSessionInterruptions",
	"CurrentPlayerSessions", "PlayerSessionActivations",
}

// Values returns the metrics by their GameLift names (FleetMetricNames).
func (m FleetMetrics) Values() map[string]float64 {
	return map[string]float64{
		"ActiveInstances":                   float64(m.ActiveInstances),
		"IdleInstances":                     float64(m.IdleInstances),
		"PercentIdleInstances":              m.PercentIdleInstances(),
		"ActiveServerProcesses":             float64(m.ActiveServerProcesses),
		"HealthyServerProcesses":            float64(m.HealthyServerProcesses),
		"PercentHealthyServerProcesses":     m.PercentHealthyServerProcesses(),
		"ServerProcessActivations":          float64(m.ServerProcessActivations),
		"ServerProcessTerminations":         float64(m.ServerProcessTerminations),
		"ServerProcessAbnormalTerminations": float64(m.ServerProcessAbnormalTerminations),
		"ActivatingGameSessions":            float64(m.ActivatingGameSessions),
		"ActiveGameSessions":                float64(m.ActiveGameSessions),
		"AvailableGameSessions":             float64(m.AvailableGameSessions),
		"PercentAvailableGameSessions":      m.PercentAvailableGameSessions(),
		"ConcurrentActivatableGameSessions": float64(m.ConcurrentActivatableGameSessions),
		"GameSessionInterruptions":          float64(m.GameSessionInterruptions),
		"CurrentPlayerSessions":             float64(m.CurrentPlayerSessions),
		"PlayerSessionActivations":          float64(m.PlayerSessionActivations),
	}
}

// MetricMinute is one minute of a resource's metrics (a fleet in one
// location; queues without a location), kept for the console's graphs.
type MetricMinute struct {
	Resource string
	Location string
	Minute   time.Time // the minute's start
	Values   map[string]float64
}
