package lifecycle_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/extapi"
	sdk "github.com/anylift/anylift/sdk/server"
)

// Fault injection (docs/fault-injection.md), end to end: the AWS SDK for
// Go v2 as the game backend, real WebSocket processes (the Go server SDK,
// or raw frames where the test must see every frame), time moved by the
// test.

// eachFaultBackend runs fn on a harness whose server takes InjectFault.
func eachFaultBackend(t *testing.T, fn func(t *testing.T, h *harness)) {
	eachBackend(t, fn, apitest.WithFaultInjection)
}

// inject injects f on the harness's fleet (unless f names one) and
// returns the answer.
func (h *harness) inject(f extapi.Fault) *extapi.InjectFaultOutput {
	h.t.Helper()
	if f.FleetId == "" {
		f.FleetId = h.fleet
	}
	return apitest.Extension[extapi.InjectFaultOutput](h.t, h.env, extapi.OpInjectFault, extapi.InjectFaultInput{Fault: f})
}

// faultEvents lists the fleet's GENERIC_EVENT messages, which faults write.
func (h *harness) faultEvents() []string {
	h.t.Helper()
	var out []string
	for _, e := range h.eventsWith(types.EventCodeGenericEvent) {
		out = append(out, aws.ToString(e.Message))
	}
	return out
}

// wantFaultEvents fails unless the fleet's fault events start as the
// given fragments say, one each.
func (h *harness) wantFaultEvents(fragments ...string) {
	h.t.Helper()
	got := h.faultEvents()
	if len(got) != len(fragments) {
		h.t.Fatalf("fault events %q, want %d", got, len(fragments))
	}
	for i, f := range fragments {
		if !strings.Contains(got[i], f) {
			h.t.Errorf("fault event %d %q does not say %q", i, got[i], f)
		}
	}
}

func TestFaultPlacementFailureAnswersFleetCapacityExceeded(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		p := h.dial("host-1", "proc-1", h.compute("host-1", "10.0.0.5"))
		p.ready(7777)
		f := h.inject(extapi.Fault{Kind: "PLACEMENT_FAILURE", Location: testLocation, Count: 2}).Fault
		if f.FaultId == "" || f.Count != 2 || f.ExpiresAt != nil {
			t.Fatalf("injected %+v", f)
		}
		for i := range 2 {
			_, err := h.create(nil)
			var full *types.FleetCapacityExceededException
			if !errors.As(err, &full) || !strings.Contains(err.Error(), f.FaultId) {
				t.Fatalf("CreateGameSession %d: %v, want FleetCapacityExceededException naming %s", i+1, err, f.FaultId)
			}
			if i == 0 {
				list := apitest.Extension[extapi.ListFaultsOutput](t, h.env, extapi.OpListFaults, extapi.ListFaultsInput{FleetId: h.fleet})
				if len(list.Faults) != 1 || list.Faults[0].Count != 1 || list.Faults[0].Fired != 1 {
					t.Fatalf("after one refusal: %+v", list.Faults)
				}
			}
		}
		p.noPush()
		gs := h.mustCreate(nil) // the fault is used up
		p.push("CreateGameSession")
		p.ok("ActivateGameSession", map[string]any{"GameSessionId": aws.ToString(gs.GameSessionId)})
		if list := apitest.Extension[extapi.ListFaultsOutput](t, h.env, extapi.OpListFaults, nil); len(list.Faults) != 0 {
			t.Fatalf("used up but listed: %+v", list.Faults)
		}
		h.sweep()
		h.wantFaultEvents("Anylift fault "+f.FaultId+" injected (a test, not a real failure): PLACEMENT_FAILURE",
			"Anylift fault "+f.FaultId+" (PLACEMENT_FAILURE) ended: its Count is used up; it acted 2 times")
	})
}

func TestFaultPlacementDelayHoldsTheStart(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		token := h.compute("host-1", "10.0.0.5")
		p := h.dial("host-1", "proc-1", token)
		// Ready, but its first heartbeat, which sends a start placed
		// before it, comes after the session is placed.
		p.ok("ActivateServerProcess", map[string]any{"SdkVersion": "5.4.0", "SdkLanguage": "Cpp", "Port": 7777})
		h.inject(extapi.Fault{Kind: "PLACEMENT_DELAY", Delay: "30s", Count: 1})
		gs := h.mustCreate(nil)
		id := aws.ToString(gs.GameSessionId)
		p.heartbeat(true) // does not bring the start early
		p.noPush()
		h.advance(29 * time.Second)
		p.noPush()
		h.wantSession(id, types.GameSessionStatusActivating, "")
		h.advance(time.Second)
		if m := p.push("CreateGameSession"); m["GameSessionId"] != id {
			t.Fatalf("start %v", m)
		}
		p.ok("ActivateGameSession", map[string]any{"GameSessionId": id})
		h.wantSession(id, types.GameSessionStatusActive, "")

		q := h.dial("host-1", "proc-2", token) // the fault was for one session
		q.ready(7778)
		h.mustCreate(nil)
		q.push("CreateGameSession")
		h.wantFaultEvents("PLACEMENT_DELAY", "ended: its Count is used up; it acted once")
	})
}

func TestFaultQueuePlacements(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("q"), Destinations: dest(h.fleet), TimeoutInSeconds: aws.Int32(30)})
		p := h.readyProc(h.fleet, testLocation, "host-1", "10.0.0.5")

		// A failure lasting past the queue's timeout times the placement out.
		fail := h.inject(extapi.Fault{Kind: "PLACEMENT_FAILURE", Duration: "1m"}).Fault
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("f-1"), GameSessionQueueName: aws.String("q")})
		h.sweep()
		p.noPush()
		h.advance(30 * time.Second)
		if got := h.placement("f-1"); got.Status != types.GameSessionPlacementStateTimedOut {
			t.Fatalf("under PLACEMENT_FAILURE: %s", got.Status)
		}
		apitest.Extension[extapi.ClearFaultsOutput](t, h.env, extapi.OpClearFaults, extapi.ClearFaultsInput{FaultId: fail.FaultId})

		// A delay holds the placement back for its Delay.
		h.inject(extapi.Fault{Kind: "PLACEMENT_DELAY", Delay: "20s", Count: 1})
		h.mustStart(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("d-1"), GameSessionQueueName: aws.String("q")})
		h.advance(19 * time.Second)
		p.noPush()
		if got := h.placement("d-1"); got.Status != types.GameSessionPlacementStatePending {
			t.Fatalf("delayed: %s", got.Status)
		}
		h.advance(time.Second)
		h.placedOn(p, "d-1")
		h.wantFaultEvents("PLACEMENT_FAILURE", "ended: it was cleared; it acted once", "PLACEMENT_DELAY",
			"ended: its Count is used up")
	})
}

// goProcessCountingDials is a Go SDK process that reconnects quickly and
// counts its WebSocket handshakes; log hears its warnings.
func (h *harness) goProcessCountingDials(compute, pid, token string, dials *atomic.Int32, log io.Writer) *goProcess {
	h.t.Helper()
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		dials.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: h.env.Server.SDKEndpoint(), ProcessID: pid, HostID: compute,
		FleetID: h.fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1, HTTPClient: client,
		HealthCheckInterval: time.Hour, ReconnectMin: 5 * time.Millisecond, ReconnectMax: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { p.Destroy() })
	g := &goProcess{p: p, started: make(chan sdk.GameSession, 1), updated: make(chan sdk.UpdateGameSession, 4), terminate: make(chan struct{}, 1)}
	err = p.ProcessReady(sdk.ProcessParameters{Port: 9000,
		OnStartGameSession: func(gs sdk.GameSession) { g.started <- gs },
		OnProcessTerminate: func() { g.terminate <- struct{}{} },
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return g
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// lineWriter passes each write (a log line) to a channel, dropping what
// nobody waits for.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	select {
	case w <- string(b):
	default:
	}
	return len(b), nil
}

// activeGoSession readies a Go SDK process with dial counting and gives it
// an ACTIVE game session.
func (h *harness) activeGoSession(pid string, dials *atomic.Int32, log io.Writer) (*goProcess, string) {
	h.t.Helper()
	g := h.goProcessCountingDials("host-1", pid, h.compute("host-1", "10.0.0.5"), dials, log)
	var gs *types.GameSession
	waitFor(h.t, "the process to take a game session", func() bool {
		var err error
		gs, err = h.create(nil)
		return err == nil
	})
	receive(h.t, "OnStartGameSession", g.started)
	if err := g.p.ActivateGameSession(); err != nil {
		h.t.Fatal(err)
	}
	return g, aws.ToString(gs.GameSessionId)
}

func TestFaultDropConnectionGoSDKReconnects(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		var dials atomic.Int32
		g, id := h.activeGoSession("go-1", &dials, io.Discard)
		if n := dials.Load(); n != 1 {
			t.Fatalf("%d handshakes before the fault", n)
		}
		out := h.inject(extapi.Fault{Kind: "DROP_CONNECTION", ProcessId: "go-1"})
		if len(out.Affected) != 1 || out.Affected[0] != "go-1" || out.Fault.Fired != 1 {
			t.Fatalf("inject answered %+v", out)
		}
		waitFor(t, "the SDK to reconnect", func() bool { return dials.Load() == 2 && h.process("host-1", "go-1").Connected })
		// The process works as before on its new connection.
		ps := h.reserve(id, "player-1")
		if err := g.p.AcceptPlayerSession(ps); err != nil {
			t.Fatalf("AcceptPlayerSession after the reconnect: %v", err)
		}
		h.wantSession(id, types.GameSessionStatusActive, "")
		if list := apitest.Extension[extapi.ListFaultsOutput](t, h.env, extapi.OpListFaults, nil); len(list.Faults) != 0 {
			t.Errorf("a drop without Duration is listed: %+v", list.Faults)
		}
		h.wantFaultEvents("DROP_CONNECTION on fleet " + h.fleet + ", process go-1: connections cut without a close frame. Acted on 1: go-1.")
	})
}

func TestFaultDropConnectionWithDurationRefusesReconnects(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		var dials atomic.Int32
		log := make(lineWriter, 64)
		g, id := h.activeGoSession("go-1", &dials, log)
		f := h.inject(extapi.Fault{Kind: "DROP_CONNECTION", ProcessId: "go-1", Duration: "20s"}).Fault
		waitLine(t, log, "403 Forbidden") // the SDK's reconnect was refused, and it says so
		waitFor(t, "refused reconnects to count", func() bool {
			list := apitest.Extension[extapi.ListFaultsOutput](t, h.env, extapi.OpListFaults, nil)
			return len(list.Faults) == 1 && list.Faults[0].Fired >= 2
		})
		waitFor(t, "the process to be disconnected", func() bool { return !h.process("host-1", "go-1").Connected })
		h.advance(20 * time.Second) // the fault's end; within the lost grace (30 s)
		waitFor(t, "the SDK to reconnect", func() bool { return h.process("host-1", "go-1").Connected })
		ps := h.reserve(id, "player-1")
		if err := g.p.AcceptPlayerSession(ps); err != nil {
			t.Fatalf("AcceptPlayerSession after the fault: %v", err)
		}
		h.wantFaultEvents("and refused for 20s", "Anylift fault "+f.FaultId+" (DROP_CONNECTION) ended: its Duration is over")
	})
}

// waitLine waits for a log line of the SDK's saying it could not connect
// and containing want.
func waitLine(t *testing.T, log lineWriter, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line := <-log:
			if strings.Contains(line, "connecting to the service failed; retrying") && strings.Contains(line, want) {
				return
			}
		case <-timeout:
			t.Fatalf("the SDK did not log a failed connection with %q", want)
		}
	}
}

func TestFaultTerminateProcess(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		var dials atomic.Int32
		g, id := h.activeGoSession("go-1", &dials, io.Discard)
		f := h.inject(extapi.Fault{Kind: "TERMINATE_PROCESS", GameSessionId: id}).Fault
		receive(t, "OnProcessTerminate", g.terminate)
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		if err := g.p.ProcessEnding(); err != nil {
			t.Fatalf("ProcessEnding after the fault: %v", err)
		}
		var force []string
		for _, e := range h.eventsWith(types.EventCodeServerProcessForceTerminated) {
			force = append(force, aws.ToString(e.Message))
		}
		if len(force) != 1 || !strings.Contains(force[0], f.FaultId) || !strings.Contains(force[0], "not a real failure") {
			t.Fatalf("SERVER_PROCESS_FORCE_TERMINATED events %q", force)
		}
		h.wantFaultEvents("TERMINATE_PROCESS on fleet " + h.fleet + ", game session " + id)
	})
}

func TestFaultMissedHealthChecksEndTheProcessAsUnhealthy(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1") // healthy at t0
		f := h.inject(extapi.Fault{Kind: "MISS_HEALTH_CHECKS", ProcessId: "proc-1", Duration: "10m"}).Fault
		for range 8 { // every 20 s for 2m40s, all lost
			h.advance(20 * time.Second)
			if a := p.heartbeat(true); status(a) != 200 {
				t.Fatalf("a lost heartbeat answered %v", a)
			}
		}
		h.advance(19 * time.Second) // t0+2m59s
		h.wantSession(id, types.GameSessionStatusActive, "")
		h.advance(time.Second) // t0+3m: GameLift's unhealthy timeout
		h.wantSession(id, types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
		p.push("TerminateProcess")
		if got := h.eventsWith(types.EventCodeServerProcessTerminatedUnhealthy); len(got) != 1 {
			t.Fatalf("unhealthy events %v", eventCodes(got))
		}
		list := apitest.Extension[extapi.ListFaultsOutput](t, h.env, extapi.OpListFaults, extapi.ListFaultsInput{FleetId: h.fleet})
		if len(list.Faults) != 1 || list.Faults[0].FaultId != f.FaultId || list.Faults[0].Fired != 8 {
			t.Fatalf("listed %+v", list.Faults)
		}
	})
}

func TestFaultExpireReservations(t *testing.T) {
	eachFaultBackend(t, func(t *testing.T, h *harness) {
		p, id := h.activeSession("host-1", "proc-1")
		early, kept := h.reserve(id, "player-1"), h.reserve(id, "player-2")
		out := h.inject(extapi.Fault{Kind: "EXPIRE_RESERVATIONS", PlayerSessionId: early})
		if len(out.Affected) != 1 || out.Affected[0] != early {
			t.Fatalf("inject answered %+v", out)
		}
		if got := h.playerStatus(early); got != types.PlayerSessionStatusTimedout {
			t.Fatalf("expired reservation: %s", got)
		}
		if a := p.call("AcceptPlayerSession", map[string]any{"GameSessionId": id, "PlayerSessionId": early}); status(a) < 400 {
			t.Fatalf("the game server accepted an expired reservation: %v", a)
		}
		p.ok("AcceptPlayerSession", map[string]any{"GameSessionId": id, "PlayerSessionId": kept})
		if n := aws.ToInt32(h.session(id).CurrentPlayerSessionCount); n != 1 {
			t.Fatalf("%d players after the expiry", n)
		}
		// Nothing RESERVED is left to expire.
		r := h.env.CallExtension(t, extapi.OpInjectFault, extapi.InjectFaultInput{Fault: extapi.Fault{Kind: "EXPIRE_RESERVATIONS",
			FleetId: h.fleet, GameSessionId: id}})
		if r.Status != 400 || r.ErrorType(t) != "NotFoundException" {
			t.Fatalf("with nothing to expire: %d %s", r.Status, r.Body)
		}
		h.wantFaultEvents("EXPIRE_RESERVATIONS on fleet " + h.fleet + ", player session " + early)
	})
}

func TestFaultInjectionRefusals(t *testing.T) {
	off := newHarness(t)
	r := off.env.CallExtension(t, extapi.OpInjectFault, extapi.InjectFaultInput{Fault: extapi.Fault{Kind: "PLACEMENT_FAILURE",
		FleetId: off.fleet, Count: 1}})
	if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" || !strings.Contains(string(r.Body), "--allow-fault-injection") {
		t.Fatalf("with fault injection off: %d %s", r.Status, r.Body)
	}
	st := apitest.Extension[extapi.DescribeStatusOutput](t, off.env, extapi.OpDescribeStatus, nil)
	if len(st.Fleets) != 1 || st.Fleets[0].FaultInjection {
		t.Fatalf("status with fault injection off: %+v", st)
	}

	h := newHarness(t, apitest.WithFaultInjection)
	for _, tc := range []struct {
		name, body, code, says string
	}{
		{"unknown kind", `{"Fault":{"Kind":"METEOR","FleetId":"` + h.fleet + `","Count":1}}`, "InvalidRequestException", "is not one of"},
		{"no budget", `{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"` + h.fleet + `"}}`, "InvalidRequestException", "needs a Count or a Duration"},
		{"scope", `{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"` + h.fleet + `","ProcessId":"p","Count":1}}`, "InvalidRequestException", "cannot be narrowed by ProcessId"},
		{"duration", `{"Fault":{"Kind":"MISS_HEALTH_CHECKS","FleetId":"` + h.fleet + `","Duration":"soon"}}`, "InvalidRequestException", "is not a duration"},
		{"location", `{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"` + h.fleet + `","Location":"custom-moon","Count":1}}`, "InvalidRequestException", "has no location custom-moon"},
		{"fleet", `{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"fleet-00000000-0000-0000-0000-000000000000","Count":1}}`, "NotFoundException", ""},
		{"nothing to drop", `{"Fault":{"Kind":"DROP_CONNECTION","FleetId":"` + h.fleet + `"}}`, "NotFoundException", "no connected server process"},
		{"unknown member", `{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"` + h.fleet + `","Count":1,"Colour":"red"}}`, "InvalidRequestException", "unknown field"},
	} {
		r := h.env.CallExtension(t, extapi.OpInjectFault, tc.body)
		if r.Status != 400 || r.ErrorType(t) != tc.code || !strings.Contains(string(r.Body), tc.says) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	if r := h.env.CallExtension(t, "Meteor", "{}"); r.Status != 404 || r.ErrorType(t) != "UnknownOperationException" {
		t.Errorf("unknown operation: %d %s", r.Status, r.Body)
	}
	req, _ := http.NewRequest("POST", h.env.URL+extapi.Path+extapi.OpListFaults, strings.NewReader("{}"))
	if r := h.env.Do(t, req); r.Status != 403 {
		t.Errorf("unsigned: %d %s", r.Status, r.Body)
	}
	if r := h.env.CallExtension(t, extapi.OpClearFaults, extapi.ClearFaultsInput{FaultId: "fault-none"}); r.ErrorType(t) != "NotFoundException" {
		t.Errorf("clearing an unknown fault: %d %s", r.Status, r.Body)
	}
	// Clearing a fleet's faults ends them, each with its event.
	h.inject(extapi.Fault{Kind: "PLACEMENT_FAILURE", Count: 5})
	h.inject(extapi.Fault{Kind: "MISS_HEALTH_CHECKS", Duration: "1h"})
	cleared := apitest.Extension[extapi.ClearFaultsOutput](t, h.env, extapi.OpClearFaults, extapi.ClearFaultsInput{FleetId: h.fleet})
	if len(cleared.Faults) != 2 {
		t.Fatalf("cleared %+v", cleared.Faults)
	}
	h.wantFaultEvents("PLACEMENT_FAILURE", "MISS_HEALTH_CHECKS", "ended: it was cleared", "ended: it was cleared")
	if _, err := h.create(nil); apiErrorCode(err) != "FleetCapacityExceededException" || strings.Contains(err.Error(), "fault") {
		t.Errorf("after clearing, CreateGameSession without processes: %v", err)
	}
}
