package metrics

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/anylift/anylift/internal/game"
)

// TestDashboardNamesExist: every series the Grafana dashboard in docs/
// queries is one /metrics exports, and every queue metric is graphed.
func TestDashboardNamesExist(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	queried := map[string]bool{}
	own := []string{"anylift_api_requests_total", "anylift_api_request_duration_seconds_bucket", "anylift_sdk_connected_processes"}
	for _, m := range regexp.MustCompile(`\b(gamelift|anylift)_[A-Za-z_]+`).FindAllString(string(b), -1) {
		name, isGameLift := m[len(Prefix):], m[:len(Prefix)] == Prefix
		queried[name] = true
		known := slices.Contains(game.FleetMetricNames, name) || slices.Contains(game.QueueMetricNames, name)
		if isGameLift && !known || !isGameLift && !slices.Contains(own, m) {
			t.Errorf("the dashboard queries %s, which /metrics does not export", m)
		}
	}
	for _, name := range game.QueueMetricNames {
		if !queried[name] {
			t.Errorf("the dashboard's queue row lacks %s", name)
		}
	}
}
