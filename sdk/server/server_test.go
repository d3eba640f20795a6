package server_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/sdk/server"
)

var proc1 = sdkserver.Process{FleetID: "fleet-1", ComputeID: "compute-1", PID: "proc-1"}

// fast are timings for tests: heartbeats every few milliseconds.
func fast() server.Options {
	return server.Options{
		HealthCheckInterval: 5 * time.Millisecond, HealthCheckJitter: time.Millisecond,
		HealthCheckTimeout: 20 * time.Millisecond, ReconnectMin: time.Millisecond,
		ReconnectMax: 10 * time.Millisecond, ConnectAttempts: 3, DrainTimeout: time.Millisecond,
		Getenv: func(string) string { return "" }, Exit: func(int) { panic("exit") },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func start(t *testing.T) *sdktest.Env {
	env := sdktest.Start(t, sdkserver.Config{ReplacedGrace: time.Millisecond})
	env.Backend.AllowToken("fleet-1", "compute-1", "token-1")
	return env
}

func params(env *sdktest.Env) server.ServerParameters {
	return server.ServerParameters{WebSocketURL: env.URL, ProcessID: "proc-1", HostID: "compute-1", FleetID: "fleet-1", AuthToken: "token-1"}
}

func initProcess(t *testing.T, env *sdktest.Env, opts server.Options) *server.Process {
	t.Helper()
	p, err := server.Init(params(env), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Destroy() })
	env.Backend.Wait(t, "Connected")
	return p
}

// ready calls ProcessReady and waits for the first heartbeat, after which
// the process takes CreateGameSession.
func ready(t *testing.T, env *sdktest.Env, p *server.Process, pp server.ProcessParameters) {
	t.Helper()
	if err := p.ProcessReady(pp); err != nil {
		t.Fatal(err)
	}
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
}

func startSession(t *testing.T, env *sdktest.Env, id string) {
	t.Helper()
	env.Backend.AddGameSession(proc1, id)
	if !env.Server.Push(proc1, &sdkwire.CreateGameSession{GameSessionId: id, GameSessionName: "name1", MaximumPlayerSessionCount: 4,
		Port: 7777, IpAddress: "127.0.0.1", GameProperties: map[string]string{"k": "v"}}) {
		t.Fatal("push not sent")
	}
}

func wantType(t *testing.T, err error, typ server.ErrorType) {
	t.Helper()
	if !errors.Is(err, &server.Error{Type: typ}) {
		t.Fatalf("error %v, want type %v", err, typ)
	}
}

func TestGameLiftStyleLifecycle(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	wantType(t, p.ActivateGameSession(), server.ProcessNotReady)
	started := make(chan server.GameSession, 1)
	ready(t, env, p, server.ProcessParameters{Port: 7777, LogParameters: server.LogParameters{LogPaths: []string{"/tmp/a.log"}},
		OnStartGameSession: func(gs server.GameSession) { started <- gs }, OnProcessTerminate: func() {}})
	if pr, _ := env.Backend.Process(proc1); !pr.Active || pr.Port != 7777 || !pr.Healthy {
		t.Errorf("process %+v", pr)
	}
	wantType(t, p.ActivateGameSession(), server.GameSessionIDNotSet)
	startSession(t, env, "gs-1")
	gs := <-started
	if gs.GameSessionID != "gs-1" || gs.Name != "name1" || gs.FleetID != "fleet-1" || gs.GameProperties["k"] != "v" || gs.MaximumPlayerSessionCount != 4 {
		t.Errorf("game session %+v", gs)
	}
	if err := p.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
	if st, _ := env.Backend.SessionStatus("gs-1"); st != "ACTIVE" {
		t.Errorf("status %s", st)
	}
	env.Backend.AddPlayerSession("gs-1", "psess-1", "player-1")
	if err := p.AcceptPlayerSession("psess-1"); err != nil {
		t.Fatal(err)
	}
	wantType(t, p.AcceptPlayerSession("psess-1"), server.BadRequest)
	wantType(t, p.AcceptPlayerSession("psess_1"), server.Validation)
	res, err := p.DescribePlayerSessions(server.DescribePlayerSessionsRequest{GameSessionID: "gs-1"})
	if err != nil || len(res.PlayerSessions) != 1 || res.PlayerSessions[0].Status != "ACTIVE" || res.PlayerSessions[0].PlayerID != "player-1" {
		t.Errorf("describe %+v %v", res, err)
	}
	_, err = p.DescribePlayerSessions(server.DescribePlayerSessionsRequest{})
	wantType(t, err, server.Validation)
	if err := p.UpdatePlayerSessionCreationPolicy(server.DenyAll); err != nil {
		t.Fatal(err)
	}
	if err := p.RemovePlayerSession("psess-1"); err != nil {
		t.Fatal(err)
	}
	if _, ps := env.Backend.SessionStatus("gs-1"); ps["psess-1"] != "COMPLETED" {
		t.Errorf("player sessions %v", ps)
	}
	if id, err := p.GetGameSessionID(); id != "gs-1" || err != nil {
		t.Errorf("GetGameSessionID %q %v", id, err)
	}
	if err := p.ProcessEnding(); err != nil {
		t.Fatal(err)
	}
	if pr, _ := env.Backend.Process(proc1); !pr.Ended {
		t.Error("process not ended")
	}
	p.Destroy()
	wantType(t, p.ActivateGameSession(), server.ProcessNotReady)
}

func TestEnvironmentWinsOverParameters(t *testing.T) {
	env := start(t)
	vars := map[string]string{server.EnvWebSocketURL: env.URL, server.EnvAuthToken: "token-1", server.EnvHostID: "compute-1",
		server.EnvFleetID: "fleet-1", server.EnvProcessID: server.ManagedResource}
	opts := fast()
	opts.Getenv = func(k string) string { return vars[k] }
	p, err := server.Init(server.ServerParameters{WebSocketURL: "ws://127.0.0.1:1", ProcessID: "x", HostID: "h", FleetID: "f", AuthToken: "wrong"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	if ev := env.Backend.Wait(t, "Connected"); len(ev.Process.PID) != 36 {
		t.Errorf("ManagedResource gave pID %q, want a UUID", ev.Process.PID)
	}
}

func TestParametersValidatedBeforeConnecting(t *testing.T) {
	env := start(t)
	for name, mod := range map[string]func(*server.ServerParameters){
		"fleet id":   func(sp *server.ServerParameters) { sp.FleetID = "fleet_1" },
		"host id":    func(sp *server.ServerParameters) { sp.HostID = "compute.1" },
		"process id": func(sp *server.ServerParameters) { sp.ProcessID = "" },
		"token":      func(sp *server.ServerParameters) { sp.AuthToken = "" },
	} {
		sp := params(env)
		mod(&sp)
		_, err := server.Init(sp, fast())
		if !errors.Is(err, &server.Error{Type: server.Validation}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := initProcess(t, env, fast())
	wantType(t, p.ProcessReady(server.ProcessParameters{Port: 0}), server.Validation)
	wantType(t, p.ProcessReady(server.ProcessParameters{Port: 60001}), server.Validation)
}

func TestRefusedHandshakeFailsInit(t *testing.T) {
	env := start(t)
	sp := params(env)
	sp.AuthToken = "expired"
	_, err := server.Init(sp, fast())
	wantType(t, err, server.LocalConnectionFailed)
}

func TestReconnectKeepsTheProcessWithoutReactivation(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	started := make(chan server.GameSession, 1)
	ready(t, env, p, server.ProcessParameters{Port: 7777, OnStartGameSession: func(gs server.GameSession) { started <- gs }, OnProcessTerminate: func() {}})
	env.Server.Disconnect(proc1, "test drop")
	env.Backend.Wait(t, "Connected")
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
	startSession(t, env, "gs-2")
	if gs := <-started; gs.GameSessionID != "gs-2" {
		t.Errorf("started %+v", gs)
	}
	if err := p.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
}

func TestRefreshConnectionMovesToTheNewConnection(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	terminated := make(chan struct{})
	ready(t, env, p, server.ProcessParameters{Port: 7777, OnStartGameSession: func(server.GameSession) {}, OnProcessTerminate: func() { close(terminated) }})
	env.Backend.AllowToken("fleet-1", "compute-1", "token-2")
	env.Server.Push(proc1, &sdkwire.RefreshConnection{RefreshConnectionEndpoint: env.URL + "/refreshed", AuthToken: "token-2"})
	env.Backend.Wait(t, "Connected")
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
	env.Server.Push(proc1, &sdkwire.TerminateProcess{TerminationTime: 1795316569128})
	<-terminated
	if tt, err := p.GetTerminationTime(); tt != 1795316569 || err != nil {
		t.Errorf("termination time %d %v", tt, err)
	}
}

func TestTerminateProcessWithoutCallbackEndsTheProcess(t *testing.T) {
	env := start(t)
	exited := make(chan int, 1)
	opts := fast()
	opts.Exit = func(code int) { exited <- code }
	p := initProcess(t, env, opts)
	ready(t, env, p, server.ProcessParameters{Port: 7777, OnStartGameSession: func(server.GameSession) {}})
	env.Server.Push(proc1, &sdkwire.TerminateProcess{TerminationTime: 1})
	if code := <-exited; code != 0 {
		t.Errorf("exit code %d", code)
	}
	if pr, _ := env.Backend.Process(proc1); !pr.Ended {
		t.Error("ProcessEnding not sent")
	}
}

func TestHealthCheckTimeoutReportsUnhealthy(t *testing.T) {
	env := start(t)
	p := initProcess(t, env, fast())
	block := make(chan struct{})
	defer close(block)
	if err := p.ProcessReady(server.ProcessParameters{Port: 7777, OnStartGameSession: func(server.GameSession) {},
		OnProcessTerminate: func() {}, OnHealthCheck: func() bool { <-block; return true }}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		ev := env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
		if ev.Request.(*sdkwire.HeartbeatServerProcess).HealthStatus {
			t.Error("a hung health check reported healthy")
		}
	}
}

// TestTokenNeverLogged: a failed connect says why in the log and in the
// error, and neither holds the auth token (the dialer's error quotes the
// URL, whose query carries it).
func TestTokenNeverLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	const token = "tok-5ecret-do-not-print-0123456789"
	var logs bytes.Buffer
	_, err = server.Init(server.ServerParameters{WebSocketURL: "ws://" + addr, ProcessID: "p", HostID: "h", FleetID: "fleet-1", AuthToken: token},
		server.Options{Getenv: func(string) string { return "" }, ConnectAttempts: 2, ReconnectMin: time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err == nil {
		t.Fatal("Init succeeded against a closed port")
	}
	if strings.Contains(err.Error(), token) || strings.Contains(logs.String(), token) {
		t.Fatalf("the token was printed:\nerr: %v\nlog: %s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "connecting to the service failed") || !strings.Contains(logs.String(), "tok-…") {
		t.Fatalf("log: %s", logs.String())
	}
}

// gate is a TCP forwarder to addr that holds every connection until
// opened.
type gate struct {
	ln       net.Listener
	open     chan struct{}
	accepted chan struct{} // one per connection held
}

func newGate(t *testing.T, addr string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, open: make(chan struct{}), accepted: make(chan struct{}, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.accepted <- struct{}{}
			go func() {
				defer c.Close()
				<-g.open
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return g
}

// A RefreshConnection whose new connection is still opening when the
// current one drops: the refresh and the reconnection both end with a
// connection (to the refreshed endpoint), and the process goes on with
// the later one.
func TestRefreshWhileReconnecting(t *testing.T) {
	env := start(t)
	opts := fast()
	opts.HealthCheckInterval = time.Hour
	p := initProcess(t, env, opts)
	started := make(chan server.GameSession, 1)
	ready(t, env, p, server.ProcessParameters{Port: 7777, OnStartGameSession: func(gs server.GameSession) { started <- gs }, OnProcessTerminate: func() {}})
	g := newGate(t, strings.TrimPrefix(env.URL, "ws://"))
	env.Backend.AllowToken("fleet-1", "compute-1", "token-2")
	env.Server.Push(proc1, &sdkwire.RefreshConnection{RefreshConnectionEndpoint: "ws://" + g.ln.Addr().String(), AuthToken: "token-2"})
	<-g.accepted           // the refresh's connection is held at the gate
	env.Server.Drop(proc1) // the reconnection's will be too
	env.Backend.Wait(t, "Disconnected")
	<-g.accepted
	close(g.open)
	env.Backend.Wait(t, "Connected")
	env.Backend.Wait(t, "Connected")
	startSession(t, env, "gs-after")
	if gs := <-started; gs.GameSessionID != "gs-after" {
		t.Errorf("started %+v", gs)
	}
	if err := p.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
}
