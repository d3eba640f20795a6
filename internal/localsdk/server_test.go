package localsdk_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/localsdk"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/sdk/server"
)

var proc1 = sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "proc-1"}

// env is an in-memory process endpoint and a local SDK server holding
// proc-1's connection.
type env struct {
	sdk   *sdktest.Env
	local *localsdk.Server
	conn  *localsdk.Conn
	token string
}

func start(t *testing.T) *env {
	t.Helper()
	e := &env{sdk: sdktest.Start(t, sdkserver.Config{ReplacedGrace: time.Millisecond})}
	e.sdk.Backend.AllowToken("fleet-1", "compute-1", "token-1")
	local, err := localsdk.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	e.local = local
	params := func() server.ServerParameters {
		return server.ServerParameters{WebSocketURL: e.sdk.URL, ProcessID: "proc-1", HostID: "compute-1", FleetID: "fleet-1", AuthToken: "token-1"}
	}
	e.conn = localsdk.NewConn("proc-1", params, server.Options{
		HealthCheckInterval: time.Hour, ConnectAttempts: 1, Logger: slog.New(slog.DiscardHandler)})
	e.token = local.Add(e.conn)
	return e
}

// call sends a request with the process's token and decodes the answer
// into out (when not nil); it returns the status and the raw body.
func (e *env) call(t *testing.T, method, path string, in, out any) (int, string) {
	t.Helper()
	return call(t, e.local.URL(), e.token, method, path, in, out)
}

func call(t *testing.T, base, token, method, path string, in, out any) (int, string) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

func (e *env) ok(t *testing.T, method, path string, in, out any) {
	t.Helper()
	if status, body := e.call(t, method, path, in, out); status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, status, body)
	}
}

// TestLifecycleOverHTTP: a process readies over HTTP, receives its game
// session by long poll, activates it, accepts, describes and removes a
// player, changes the policy, starts and stops a backfill, asks for the
// compute's certificate and role credentials, reports itself unhealthy,
// hears of its termination and ends; every call reaches the service as
// the SDK's message.
func TestLifecycleOverHTTP(t *testing.T) {
	e := start(t)
	b := e.sdk.Backend
	if status, body := e.call(t, "POST", "/v1/activate", nil, nil); status != http.StatusConflict || !strings.Contains(body, `"PROCESS_NOT_READY"`) {
		t.Fatalf("activate before ready: %d %s", status, body)
	}
	e.ok(t, "POST", "/v1/ready", localsdk.ReadyRequest{Port: 7777, LogPaths: []string{"/tmp/game.log"}}, nil)
	got := b.Wait(t, sdkwire.ActionActivateServerProcess).Request.(*sdkwire.ActivateServerProcess)
	if got.Port != 7777 || len(got.LogPaths) != 1 {
		t.Fatalf("ActivateServerProcess %+v", got)
	}
	if status, body := e.call(t, "POST", "/v1/ready", localsdk.ReadyRequest{Port: 7777}, nil); status != http.StatusConflict || !strings.Contains(body, "ALREADY_INITIALIZED") {
		t.Fatalf("second ready: %d %s", status, body)
	}

	var none localsdk.EventsResult
	e.ok(t, "GET", "/v1/events?wait=0", nil, &none)
	if len(none.Events) != 0 {
		t.Fatalf("events before any push: %+v", none)
	}
	b.AddGameSession(proc1, "gs-1")
	if !e.sdk.Server.Push(proc1, &sdkwire.CreateGameSession{GameSessionId: "gs-1", GameSessionName: "duel", MaximumPlayerSessionCount: 4,
		Port: 7777, IpAddress: "127.0.0.1", GameProperties: map[string]string{"mode": "ffa"}, MatchmakerData: `{"m":1}`}) {
		t.Fatal("push not sent")
	}
	var evs localsdk.EventsResult
	e.ok(t, "GET", "/v1/events?after=0&wait=30", nil, &evs)
	if len(evs.Events) != 1 {
		t.Fatalf("events: %+v", evs)
	}
	ev := evs.Events[0]
	if ev.Seq != 1 || ev.Type != localsdk.EventStartGameSession || ev.GameSession.GameSessionId != "gs-1" ||
		ev.GameSession.GameProperties["mode"] != "ffa" || ev.GameSession.MaximumPlayerSessionCount != 4 || ev.GameSession.MatchmakerData != `{"m":1}` {
		t.Fatalf("start event %+v %+v", ev, ev.GameSession)
	}
	e.ok(t, "POST", "/v1/activate", nil, nil)
	b.Wait(t, sdkwire.ActionActivateGameSession)
	if st, _ := b.SessionStatus("gs-1"); st != "ACTIVE" {
		t.Fatalf("session %s", st)
	}

	b.AddPlayerSession("gs-1", "psess-1", "alice")
	e.ok(t, "POST", "/v1/player-sessions/accept", localsdk.PlayerSessionRequest{PlayerSessionId: "psess-1"}, nil)
	var ps localsdk.DescribePlayerSessionsResult
	e.ok(t, "POST", "/v1/player-sessions/describe", localsdk.DescribePlayerSessionsRequest{GameSessionId: "gs-1"}, &ps)
	if len(ps.PlayerSessions) != 1 || ps.PlayerSessions[0].PlayerId != "alice" || ps.PlayerSessions[0].Status != "ACTIVE" {
		t.Fatalf("describe %+v", ps)
	}
	if status, body := e.call(t, "POST", "/v1/player-sessions/accept", localsdk.PlayerSessionRequest{PlayerSessionId: "psess-nobody"}, nil); status != http.StatusBadRequest && status != http.StatusNotFound {
		t.Fatalf("accepting an unknown player session: %d %s", status, body)
	}
	e.ok(t, "POST", "/v1/player-sessions/remove", localsdk.PlayerSessionRequest{PlayerSessionId: "psess-1"}, nil)
	e.ok(t, "POST", "/v1/player-session-creation-policy", localsdk.PolicyRequest{PlayerSessionCreationPolicy: "DENY_ALL"}, nil)
	if p, _ := b.Process(proc1); p.Policy != "DENY_ALL" {
		t.Fatalf("policy %q", p.Policy)
	}
	skill := 20.0
	var ticket localsdk.StartMatchBackfillResult
	e.ok(t, "POST", "/v1/backfill/start", localsdk.StartMatchBackfillRequest{
		MatchmakingConfigurationArn: "arn:aws:gamelift:us-west-2:000000000000:matchmakingconfiguration/duel",
		Players: []localsdk.Player{{PlayerId: "alice", Team: "red", PlayerAttributes: map[string]localsdk.AttributeValue{"skill": {N: &skill}},
			LatencyInMs: map[string]int{"custom-x": 20}}},
	}, &ticket)
	bf := b.Wait(t, sdkwire.ActionStartMatchBackfill).Request.(*sdkwire.StartMatchBackfill)
	if ticket.TicketId != "ticket-1" || bf.GameSessionArn != "gs-1" || !reflect.DeepEqual(bf.Players[0].PlayerAttributes["skill"], sdkwire.AttributeValue{AttrType: "DOUBLE", N: 20}) {
		t.Fatalf("backfill %+v, sent %+v", ticket, bf)
	}
	e.ok(t, "POST", "/v1/backfill/stop", localsdk.StopMatchBackfillRequest{
		GameSessionArn:              "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-x/gs-1",
		MatchmakingConfigurationArn: "arn:aws:gamelift:us-west-2:000000000000:matchmakingconfiguration/duel", TicketId: "ticket-1"}, nil)
	b.Wait(t, sdkwire.ActionStopMatchBackfill)
	var cert localsdk.ComputeCertificateResult
	e.ok(t, "POST", "/v1/compute-certificate", nil, &cert)
	if cert.ComputeName != "compute-1" {
		t.Fatalf("certificate %+v", cert)
	}
	var creds localsdk.FleetRoleCredentialsResult
	e.ok(t, "POST", "/v1/fleet-role-credentials", localsdk.FleetRoleCredentialsRequest{RoleArn: "arn:aws:iam::000000000000:role/game"}, &creds)
	if creds.AccessKeyId != "" {
		t.Fatalf("credentials on an Anywhere fleet: %+v", creds)
	}

	e.ok(t, "POST", "/v1/health", localsdk.HealthRequest{Healthy: false}, nil)
	var st localsdk.State
	e.ok(t, "GET", "/v1/process", nil, &st)
	if !st.Ready || st.Healthy || st.GameSessionId != "gs-1" || st.Port != 7777 || st.LastEvent != 1 {
		t.Fatalf("state %+v", st)
	}

	if !e.sdk.Server.Push(proc1, &sdkwire.TerminateProcess{TerminationTime: 1_900_000_000_000}) {
		t.Fatal("push not sent")
	}
	e.ok(t, "GET", "/v1/events?after=1", nil, &evs)
	if len(evs.Events) != 1 || evs.Events[0].Type != localsdk.EventProcessTerminate || evs.Events[0].TerminationTime != 1_900_000_000 {
		t.Fatalf("terminate event %+v", evs)
	}
	e.ok(t, "POST", "/v1/ending", nil, nil)
	b.Wait(t, sdkwire.ActionTerminateServerProcess)
	if p, _ := b.Process(proc1); !p.Ended {
		t.Fatalf("process %+v after ending", p)
	}
}

// TestOnlyItsProcess: a request without the token, with another token,
// or after the process's connection was removed is refused, and the
// server listens only on the loopback interface.
func TestOnlyItsProcess(t *testing.T) {
	e := start(t)
	for _, tok := range []string{"", "not-the-token", e.token + "x"} {
		if status, body := call(t, e.local.URL(), tok, "GET", "/v1/process", nil, nil); status != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHORIZED") {
			t.Fatalf("token %q: %d %s", tok, status, body)
		}
	}
	e.ok(t, "GET", "/v1/process", nil, nil)
	e.local.Remove(e.token)
	if status, _ := e.call(t, "GET", "/v1/process", nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("after Remove: %d", status)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		if s, err := localsdk.Listen(addr, nil); err == nil {
			s.Close()
			t.Fatalf("Listen(%q) accepted an address off the loopback", addr)
		}
	}
}

// TestEventStream: the events arrive as Server-Sent Events, and the
// stream ends when the process's connection closes.
func TestEventStream(t *testing.T) {
	e := start(t)
	e.ok(t, "POST", "/v1/ready", localsdk.ReadyRequest{Port: 7000}, nil)
	e.sdk.Backend.Wait(t, sdkwire.ActionActivateServerProcess)
	req, _ := http.NewRequest("GET", e.local.URL()+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	e.sdk.Backend.AddGameSession(proc1, "gs-2")
	e.sdk.Server.Push(proc1, &sdkwire.CreateGameSession{GameSessionId: "gs-2", MaximumPlayerSessionCount: 2})
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() && sc.Text() != "" {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 3 || lines[0] != "id: 1" || lines[1] != "event: StartGameSession" || !strings.Contains(lines[2], `"GameSessionId":"gs-2"`) {
		t.Fatalf("event lines %q", lines)
	}
	e.local.Remove(e.token)
	for sc.Scan() {
	}
	if sc.Err() != nil {
		t.Fatalf("stream ended with %v", sc.Err())
	}
}
