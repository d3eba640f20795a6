package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func TestQueuePagesNotFound(t *testing.T) {
	e := fleettest.New(t)
	c := newClient(t, e.API.URL)
	c.signIn()
	for _, path := range []string{"/console/queues/no-such-queue", "/console/placement?id=no-such-placement",
		"/console/placement"} {
		resp, body := c.get(path)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "does not exist") {
			t.Errorf("GET %s: %s\n%s", path, resp.Status, body)
		}
	}
	if resp, _ := c.get("/console/queues/no-such-queue/metrics.json?metric=QueueDepth"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("metrics of an unknown queue: %s", resp.Status)
	}
}

// TestQueuePagesEscapeHostileNames stores a queue and placements whose
// every name is markup (written to the store directly, past the API's
// name rules, as a hostile peer node or an old record could) and finds
// it escaped on every queue and placement page.
func TestQueuePagesEscapeHostileNames(t *testing.T) {
	e := fleettest.New(t)
	p := e.Process("host-1", "proc-1")
	e.Queue("arena", "")
	e.Start("arena", "pl-1", &gamelift.StartGameSessionPlacementInput{GameSessionName: aws.String(hostileName),
		GameSessionData:       aws.String(hostileData),
		GameProperties:        []types.GameProperty{{Key: aws.String("mode"), Value: aws.String(hostileValue)}},
		DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String(hostileName), PlayerData: aws.String(hostileData)}}})
	e.Fulfil(p, "pl-1")
	hostileQueue := `q"><script>alert('q')</script>`
	err := e.API.Server.Store().Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertQueue(&game.Queue{Name: hostileQueue, Destinations: []string{hostileValue}, CustomEventData: hostileData}); err != nil {
			return err
		}
		return tx.InsertPlacement(&game.Placement{ID: hostileName, QueueName: hostileQueue, Status: game.PlacementPending,
			GameSessionName: hostileValue, DesiredPlayers: []game.DesiredPlayer{{PlayerID: hostileValue, PlayerData: hostileData}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, e.API.URL)
	c.signIn()
	c.wantEscaped("/console/queues", "/console/queues?fragment=1", "/console/queues/arena",
		"/console/queues/"+url.PathEscape(hostileQueue), "/console/placements", "/console/placements?fragment=1",
		"/console/placements?queue="+url.QueryEscape(hostileQueue), "/console/placement?id=pl-1",
		"/console/placement?id="+url.QueryEscape(hostileName))
	_, body := c.get("/console/placement?id=pl-1")
	for _, want := range []string{"FULFILLED", "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;", `href="/console/session?id=arn`} {
		if !strings.Contains(body, want) {
			t.Errorf("the placement page lacks %q", want)
		}
	}
}

// TestStopPlacementFromConsole: the stop button needs the session's CSRF
// token and the console's origin, and stops a waiting placement.
func TestStopPlacementFromConsole(t *testing.T) {
	e := fleettest.New(t)
	e.Queue("arena", "") // no process: the placement waits
	e.Start("arena", "pl-wait", nil)
	c := newClient(t, e.API.URL)
	c.signIn()
	_, page := c.get("/console/placement?id=pl-wait")
	if !strings.Contains(page, `id="stop"`) {
		t.Fatal("no stop button on a PENDING placement")
	}
	form := url.Values{"id": {"pl-wait"}}
	if resp, _ := c.post("/console/placement/stop", form, c.base); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no token: %s", resp.Status)
	}
	form.Set("csrf", csrfOf(t, page))
	if resp, _ := c.post("/console/placement/stop", form, "http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %s", resp.Status)
	}
	if s := placementStatus(t, e, "pl-wait"); s != "PENDING" {
		t.Fatalf("status after refused stops = %s", s)
	}
	if resp, _ := c.post("/console/placement/stop", form, c.base); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %s", resp.Status)
	}
	if s := placementStatus(t, e, "pl-wait"); s != "CANCELLED" {
		t.Fatalf("status after stop = %s", s)
	}
	if resp, body := c.post("/console/placement/stop", form, c.base); resp.StatusCode == http.StatusSeeOther || strings.Contains(body, "goroutine") {
		t.Fatalf("second stop: %s", resp.Status)
	}
}

func placementStatus(t *testing.T, e *fleettest.Env, id string) string {
	t.Helper()
	out, err := e.GL.DescribeGameSessionPlacement(context.Background(), &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	return string(out.GameSessionPlacement.Status)
}
