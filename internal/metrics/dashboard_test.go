package metrics

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/anylift/anylift/internal/game"
)

// TestDashboardNamesExist: every series the Grafana dashboard in docs/
// queries is one /metrics exports.
func TestDashboardNamesExist(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	own := []string{"anylift_api_requests_total", "anylift_api_request_duration_seconds_bucket", "anylift_sdk_connected_processes"}
	for _, m := range regexp.MustCompile(`\b(gamelift|anylift)_[A-Za-z_]+`).FindAllString(string(b), -1) {
		name, isGameLift := m[len(Prefix):], m[:len(Prefix)] == Prefix
		if isGameLift && !slices.Contains(game.FleetMetricNames, name) || !isGameLift && !slices.Contains(own, m) {
			t.Errorf("the dashboard queries %s, which /metrics does not export", m)
		}
	}
}
