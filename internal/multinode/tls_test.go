package multinode

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// TestTLSOnlyProcessesMoveOffADrainingNode: two nodes behind a TCP load
// balancer that passes TLS through (as a layer-4 balancer in front of the
// process endpoint does), both started with --sdk-endpoint naming it.
// Processes whose client speaks only TLS 1.2 and checks no certificate, as
// the C++ SDK, connect with the balancer's ws:// URL and land on the first
// node. When it stops, its RefreshConnection sends them to the balancer,
// which now picks the other node; a game session is placed on them there.
func TestTLSOnlyProcessesMoveOffADrainingNode(t *testing.T) {
	dsn := schema(t)
	lb := newBalancer(t)
	node := func() *apitest.Env {
		return apitest.Start(t, apitest.WithPostgres(dsn), func(c *server.Config) {
			c.NodeListen, c.NodeSecret = "127.0.0.1:0", nodeSecret
			c.SDKEndpoint = "ws://" + lb.addr()
			c.HealthCheckInterval = time.Hour
			c.DrainTimeout = 10 * time.Second
		})
	}
	a, b := node(), node()
	lb.setBackends(a.Server.Addr(), b.Server.Addr())
	ctx := context.Background()
	gl := b.Client()
	fleet := apitest.AnywhereFleet(t, gl, location, "tls-drain")
	token := apitest.RegisterCompute(t, gl, fleet, location, "h1", "10.0.0.1")

	cpp := apitest.NewTLSOnly()
	started := make(chan string, 4)
	var procs []*sdk.Process
	for _, pid := range []string{"cpp-1", "cpp-2"} {
		p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: a.Server.SDKEndpoint(), ProcessID: pid, HostID: "h1",
			FleetID: fleet, AuthToken: token}, sdk.Options{
			HTTPClient: cpp.Client, Getenv: func(string) string { return "" }, Exit: func(int) {},
			HealthCheckInterval: 50 * time.Millisecond, HealthCheckJitter: time.Millisecond, DrainTimeout: 10 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Destroy()
		err = p.ProcessReady(sdk.ProcessParameters{Port: 9000, OnProcessTerminate: func() {},
			OnStartGameSession: func(gs sdk.GameSession) { started <- gs.GameSessionID; p.ActivateGameSession() }})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	place := func(gl *gamelift.Client) string {
		t.Helper()
		var out *gamelift.CreateGameSessionOutput
		var err error
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
				Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2)})
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // until a heartbeat makes a process free
		}
		if err != nil {
			t.Fatalf("CreateGameSession: %v", err)
		}
		id := aws.ToString(out.GameSession.GameSessionId)
		select {
		case got := <-started:
			if got != id {
				t.Fatalf("started %s, created %s", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the game session never reached a process")
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
			if err == nil && d.GameSessions[0].Status == types.GameSessionStatusActive {
				return id
			}
			if time.Now().After(deadline) {
				t.Fatalf("game session %s never ACTIVE: %v %v", id, d, err)
			}
		}
	}
	place(a.Client())
	if got := lb.connections(a.Server.Addr()); got != 2 {
		t.Fatalf("%d process connections went to the first node, want 2", got)
	}

	closeCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := a.Server.Close(closeCtx); err != nil {
		t.Fatalf("stopping the first node: %v", err)
	}
	// With fleet ownership the second node takes the fleet as the first
	// stops: a process that reconnects before it has is refused (nothing
	// to relay to) and dials again, so the balancer may count more than
	// one connection for it.
	for deadline := time.Now().Add(20 * time.Second); lb.connections(b.Server.Addr()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d process connections moved to the second node, want 2 (dialed %v)", lb.connections(b.Server.Addr()), cpp.Dialed())
		}
	}
	place(gl)
	for _, addr := range cpp.Dialed() {
		if addr != lb.addr() {
			t.Errorf("a process dialed %s, not the balancer %s", addr, lb.addr())
		}
	}
}

// balancer is a layer-4 load balancer for the test: each connection goes,
// bytes unchanged (TLS included), to the first backend whose /healthz
// answers 200, as a balancer's health check would choose.
type balancer struct {
	t  *testing.T
	ln net.Listener

	mu       sync.Mutex
	backends []string
	counts   map[string]int
}

func newBalancer(t *testing.T) *balancer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := &balancer{t: t, ln: ln, counts: map[string]int{}}
	t.Cleanup(func() { ln.Close() })
	go lb.serve()
	return lb
}

func (lb *balancer) addr() string { return lb.ln.Addr().String() }

func (lb *balancer) setBackends(addrs ...string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.backends = addrs
}

// connections is how many connections went to backend.
func (lb *balancer) connections(backend string) int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.counts[backend]
}

func (lb *balancer) serve() {
	for {
		c, err := lb.ln.Accept()
		if err != nil {
			return
		}
		go lb.pass(c)
	}
}

func (lb *balancer) pass(c net.Conn) {
	defer c.Close()
	lb.mu.Lock()
	backends := lb.backends
	lb.mu.Unlock()
	client := &http.Client{Timeout: 2 * time.Second}
	for _, addr := range backends {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			continue
		}
		up, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		defer up.Close()
		lb.mu.Lock()
		lb.counts[addr]++
		lb.mu.Unlock()
		done := make(chan struct{}, 2)
		go func() { io.Copy(up, c); done <- struct{}{} }()
		go func() { io.Copy(c, up); done <- struct{}{} }()
		<-done
		return
	}
}
