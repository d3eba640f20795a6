package events_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/server"
)

// hooked is one webhook request as received.
type hooked struct {
	body              []byte
	signature, evType string
}

// envelope is the part of GameLift's event envelope the test checks.
type envelope struct {
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

type placementDetail struct {
	Type, PlacementID, StartTime, EndTime string
	Port, GameSessionArn, IPAddress       string
	GameSessionRegion                     string
	PlacedPlayerSessions                  []struct{ PlayerID, PlayerSessionID string }
}

func decodeEvent(t *testing.T, body []byte) (envelope, placementDetail) {
	t.Helper()
	var env envelope
	var d placementDetail
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("envelope %s: %v", body, err)
	}
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		t.Fatalf("detail %s: %v", env.Detail, err)
	}
	return env, d
}

// TestPlacementEventsEndToEnd places through a real queue onto a real Go
// SDK process, with the queue's NotificationTarget a webhook: the
// PlacementFulfilled, PlacementCancelled (StopGameSessionPlacement) and
// PlacementTimedOut events arrive on GET /events and at the webhook,
// signed, in GameLift's shapes; a consumer that reconnects with the last
// id it saw gets the events it missed. The clock is the server's.
func TestPlacementEventsEndToEnd(t *testing.T) {
	secret := []byte("hook-secret")
	got := make(chan hooked, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- hooked{b, r.Header.Get(events.HeaderSignature), r.Header.Get(events.HeaderEventType)}
	}))
	defer hook.Close()
	e := fleettest.New(t, func(c *server.Config) { c.Events.Webhook.Secret = secret })
	srv := e.API.Server
	p := e.Process("host-1", "proc-1")
	q := e.Queue("arena", hook.URL+"/gamelift")
	stream := connect(t, srv, "", "")

	e.Start("arena", "pl-1", &gamelift.StartGameSessionPlacementInput{
		DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("player-1")}}})
	placed := e.Fulfil(p, "pl-1")
	f := stream.nextEvent()
	if f.event != "PlacementFulfilled" {
		t.Fatalf("first event %+v", f)
	}
	env, d := decodeEvent(t, []byte(f.data))
	if env.DetailType != "GameLift Queue Placement Event" || env.Source != "aws.gamelift" || len(env.Resources) != 1 ||
		env.Resources[0] != aws.ToString(q.GameSessionQueueArn) {
		t.Errorf("envelope %+v", env)
	}
	if d.Type != "PlacementFulfilled" || d.PlacementID != "pl-1" || d.GameSessionArn != aws.ToString(placed.GameSessionArn) ||
		d.Port != "9000" || d.IPAddress != aws.ToString(placed.IpAddress) || d.GameSessionRegion != fleettest.Location ||
		d.StartTime == "" || d.EndTime == "" || len(d.PlacedPlayerSessions) != 1 ||
		d.PlacedPlayerSessions[0].PlayerID != "player-1" ||
		d.PlacedPlayerSessions[0].PlayerSessionID != aws.ToString(placed.PlacedPlayerSessions[0].PlayerSessionId) {
		t.Errorf("detail %+v\nplacement %+v", d, placed)
	}
	expectHook(t, got, "PlacementFulfilled", "pl-1", []byte(f.data), secret)
	last := f.id
	stream.close()

	// While the consumer is away: one placement stopped, one timed out.
	e.Start("arena", "pl-2", nil) // the only process is busy: it waits
	if _, err := e.GL.StopGameSessionPlacement(context.Background(),
		&gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-2")}); err != nil {
		t.Fatal(err)
	}
	expectHook(t, got, "PlacementCancelled", "pl-2", nil, secret)
	e.Start("arena", "pl-3", nil)
	e.Clock.Set(e.Clock.Now().Add(time.Duration(aws.ToInt32(q.TimeoutInSeconds)+1) * time.Second))
	srv.Service().Sweep(context.Background())
	expectHook(t, got, "PlacementTimedOut", "pl-3", nil, secret)

	resumed := connect(t, srv, "", last)
	for _, want := range []struct{ typ, id string }{{"PlacementCancelled", "pl-2"}, {"PlacementTimedOut", "pl-3"}} {
		f := resumed.nextEvent()
		_, d := decodeEvent(t, []byte(f.data))
		if f.event != want.typ || d.Type != want.typ || d.PlacementID != want.id || d.EndTime == "" {
			t.Errorf("resumed event %+v (%+v), want %s of %s", f, d, want.typ, want.id)
		}
	}
}

// expectHook waits for the webhook's next request and checks its type,
// placement, signature and (when given) that its body is the stream's.
func expectHook(t *testing.T, got <-chan hooked, typ, placementID string, body, secret []byte) {
	t.Helper()
	var h hooked
	select {
	case h = <-got:
	case <-time.After(30 * time.Second): // a bound against a hung test, not a wait
		t.Fatalf("no %s at the webhook", typ)
	}
	_, d := decodeEvent(t, h.body)
	if h.evType != typ || d.Type != typ || d.PlacementID != placementID {
		t.Errorf("webhook got %s %+v, want %s of %s", h.evType, d, typ, placementID)
	}
	if h.signature != events.Sign(secret, h.body) {
		t.Errorf("webhook signature %q does not verify", h.signature)
	}
	if body != nil && string(body) != string(h.body) {
		t.Errorf("webhook body %s\nstream data %s", h.body, body)
	}
}
