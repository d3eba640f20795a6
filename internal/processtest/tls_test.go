package processtest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// TestOneURLForEverySDK: the ws:// URL Anylift hands game servers (the
// compute's GameLiftServiceSdkEndpoint, dev's -websocketurl) serves a
// plain client, as the Go and C# SDKs are, and a TLS-only client, as the
// C++ SDK is, on the same port; the TLS listener serves TLS. Each
// RefreshConnection sends a process back the way it came (TLS stays TLS),
// and the process reconnects there with the new token.
func TestOneURLForEverySDK(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := startShortTokens(t, opts)
			cpp := apitest.NewTLSOnly()
			api := e.Server.Addr()
			if e.Server.SDKEndpoint() != "ws://"+api {
				t.Fatalf("SDK endpoint %s, want ws://%s", e.Server.SDKEndpoint(), api)
			}
			cases := []struct {
				pid, url string
				client   *http.Client
				back     string // where RefreshConnection sends it
			}{
				{"plain", e.Server.SDKEndpoint(), nil, "ws://" + api},
				{"tls-on-ws-url", e.Server.SDKEndpoint(), cpp.Client, "wss://" + api},
				{"tls-on-wss-url", "wss://" + api, cpp.Client, "wss://" + api},
				{"tls-listener", "wss://" + e.Server.TLSAddr(), cpp.Client, "wss://" + e.Server.TLSAddr()},
			}
			conns := make([]*websocket.Conn, len(cases))
			for i, c := range cases {
				conns[i] = mustDial(t, connectURL(c.url, e.fleet, computeName, c.pid, e.token), c.client)
				if got := exchange(t, conns[i], activateFrame); got["StatusCode"] != float64(200) {
					t.Fatalf("%s: ActivateServerProcess: %v", c.pid, got)
				}
			}
			e.clock.Advance(3*time.Minute + 30*time.Second) // within the refresh margin of the token's expiry
			e.Server.Service().Sweep(context.Background())
			for i, c := range cases {
				push := nextFrame(t, conns[i])
				if push["Action"] != "RefreshConnection" || push["RefreshConnectionEndpoint"] != c.back {
					t.Fatalf("%s: pushed %v; want RefreshConnection to %s", c.pid, push, c.back)
				}
				again := mustDial(t, connectURL(c.back, e.fleet, computeName, c.pid, push["AuthToken"].(string)), c.client)
				if got := exchange(t, again, heartbeatFrame); got["StatusCode"] != float64(200) {
					t.Fatalf("%s: heartbeat on the refreshed connection: %v", c.pid, got)
				}
			}
			if n := len(cpp.Dialed()); n != 6 {
				t.Errorf("the TLS-only client dialed %d times, want 6: %v", n, cpp.Dialed())
			}
		})
	}
}

// TestTLSOnlyProcessThroughTokenRefresh: a process whose client speaks
// only TLS 1.2 and checks no certificate, as the C++ SDK, started with the
// URL Anylift prints, hosts a game session, is refreshed when its token
// nears expiry, and hosts another after the first token has expired.
func TestTLSOnlyProcessThroughTokenRefresh(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := startShortTokens(t, opts)
			cpp := apitest.NewTLSOnly()
			tlsOnlyProcess(t, e, cpp, "cpp-1")
			tlsOnlyProcess(t, e, cpp, "cpp-2")
			e.waitProcesses(t, 2)

			a := e.placeOn(t)
			e.clock.Advance(3*time.Minute + 30*time.Second)
			e.Server.Service().Sweep(context.Background())
			eventually(t, "both processes to reconnect with new tokens", func() (bool, string) {
				return len(cpp.Dialed()) == 4, ""
			})
			e.clock.Advance(2 * time.Minute) // the first tokens have expired
			e.Server.Service().Sweep(context.Background())
			b := e.placeOn(t)
			if a == b {
				t.Fatalf("both sessions on %s", a)
			}
			for _, pid := range []string{"cpp-1", "cpp-2"} {
				if p := e.process(t, e.fleet, pid); !p.Connected || p.Endpoint != "wss://"+e.Server.Addr() {
					t.Errorf("%s after the refresh: connected %v, endpoint %q", pid, p.Connected, p.Endpoint)
				}
			}
		})
	}
}

// startShortTokens starts Anylift with 5-minute auth tokens and health
// checks that never end a process, so that the clock can jump to a token
// refresh.
func startShortTokens(t *testing.T, opts []apitest.Option) *env {
	t.Helper()
	return start(t, append(append([]apitest.Option{}, opts...), func(c *server.Config) {
		c.UnhealthyTimeout = time.Hour
		c.AuthTokenTTL = 5 * time.Minute
	}))
}

// tlsOnlyProcess starts a Go SDK process on cpp's TLS-only transport with
// the ws:// URL the server hands out.
func tlsOnlyProcess(t *testing.T, e *env, cpp *apitest.TLSOnly, pid string) *sdk.Process {
	t.Helper()
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: e.Server.SDKEndpoint(), ProcessID: pid, HostID: computeName,
		FleetID: e.fleet, AuthToken: e.token}, sdk.Options{
		HTTPClient: cpp.Client, Getenv: func(string) string { return "" }, Exit: func(int) {},
		HealthCheckInterval: 50 * time.Millisecond, HealthCheckJitter: time.Millisecond, DrainTimeout: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Destroy() })
	err = p.ProcessReady(sdk.ProcessParameters{
		Port:               7000,
		OnStartGameSession: func(sdk.GameSession) { p.ActivateGameSession() },
		OnProcessTerminate: func() {},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// placeOn creates a game session, waits for it to be ACTIVE and returns
// the process hosting it.
func (e *env) placeOn(t *testing.T) string {
	t.Helper()
	var id string
	eventually(t, "a game session placed", func() (bool, string) {
		var err error
		id, err = e.createSession(t, 2)
		return err == nil, "CreateGameSession: " + errText(err)
	})
	e.waitSession(t, id, types.GameSessionStatusActive)
	return e.host(t, id)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nextFrame reads the next frame as a JSON object.
func nextFrame(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("no frame: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("frame is not JSON: %q", b)
	}
	return m
}
