package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/fleettest"
)

func TestMetricsJSON(t *testing.T) {
	e := fleettest.New(t)
	p := e.Process("host-1", "proc-1")
	e.Session(p, "one")
	e.Clock.Set(e.Clock.Now().Add(time.Minute))
	if err := e.API.Server.History().Record(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.API.Server.Snapshots().Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, e.API.URL)
	c.signIn()
	resp, body := c.get("/console/fleets/" + e.Fleet + "/metrics.json?metric=ActiveGameSessions&range=3600")
	if resp.StatusCode != 200 {
		t.Fatalf("metrics.json: %s", resp.Status)
	}
	var data struct {
		Series []struct {
			Location string
			Points   [][2]float64
		}
	}
	if err := json.Unmarshal([]byte(body), &data); err != nil {
		t.Fatal(err)
	}
	// The recorded minute, then the current measurement. The server's own
	// history loop may also have recorded the minute before the session was
	// created (it runs on a real ticker), so only the last two are pinned.
	if len(data.Series) != 1 || data.Series[0].Location != fleettest.Location || len(data.Series[0].Points) < 2 {
		t.Fatalf("metrics.json = %s", body)
	}
	pts := data.Series[0].Points
	if last, recorded := pts[len(pts)-1], pts[len(pts)-2]; recorded[1] != 1 || last[1] != 1 || recorded[0] >= last[0] {
		t.Fatalf("metrics.json = %s", body)
	}
	for path, want := range map[string]int{
		"/console/fleets/" + e.Fleet + "/metrics.json?metric=Nope":       http.StatusBadRequest,
		"/console/fleets/fleet-nope/metrics.json?metric=ActiveInstances": http.StatusNotFound,
	} {
		if resp, _ := c.get(path); resp.StatusCode != want {
			t.Errorf("GET %s: %s, want %d", path, resp.Status, want)
		}
	}
}
