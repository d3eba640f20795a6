package processtest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	sdk "github.com/anylift/anylift/sdk/server"
)

// connectURL is the process endpoint URL a GameLift SDK builds.
func connectURL(base, fleet, compute, pid, token string) string {
	q := url.Values{"pID": {pid}, "ComputeId": {compute}, "FleetId": {fleet}, "Authorization": {token},
		"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "IdempotencyToken": {"idem-" + pid}}
	return strings.TrimSuffix(base, "/") + "/?" + q.Encode()
}

// dialRaw opens a raw WebSocket connection; it returns the HTTP status of
// a refused handshake.
func dialRaw(t *testing.T, u string, client *http.Client) (*websocket.Conn, int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: client})
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if err == nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, status, err
}

func mustDial(t *testing.T, u string, client *http.Client) *websocket.Conn {
	t.Helper()
	c, status, err := dialRaw(t, u, client)
	if err != nil {
		t.Fatalf("upgrade refused (HTTP %d): %v", status, err)
	}
	return c
}

// exchange sends frame and reads the next frame as a JSON object.
func exchange(t *testing.T, c *websocket.Conn, frame string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("no answer to %s: %v", frame, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer is not JSON: %q", b)
	}
	return m
}

// heartbeatFrame is a healthy report; a process takes game sessions only
// after its first one.
const heartbeatFrame = `{"Action":"HeartbeatServerProcess","RequestId":"r-hb","HealthStatus":true}`

const activateFrame = `{"Action":"ActivateServerProcess","RequestId":"r-act","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":[]}`

// TestHandshakeRefusals: a wrong, other-fleet, other-compute or expired
// auth token gets HTTP 403 before the upgrade.
func TestHandshakeRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, opts)
			other := apitest.CreateAnywhereFleet(t, e.gl, location, "other")
			otherToken := apitest.RegisterCompute(t, e.gl, other, location, computeName, "127.0.0.1")
			base := e.Server.SDKEndpoint()
			refused := map[string]string{
				"wrong token":                       connectURL(base, e.fleet, computeName, "p1", "not-a-token"),
				"other fleet token":                 connectURL(base, e.fleet, computeName, "p1", otherToken),
				"token for another fleet's compute": connectURL(base, other, computeName, "p1", e.token),
				"unknown compute":                   connectURL(base, e.fleet, "host-9", "p1", e.token),
				"no token":                          connectURL(base, e.fleet, computeName, "p1", ""),
			}
			for what, u := range refused {
				if _, status, err := dialRaw(t, u, nil); err == nil || status != http.StatusForbidden {
					t.Errorf("%s: HTTP %d, %v; want 403", what, status, err)
				}
			}
			c := mustDial(t, connectURL(base, e.fleet, computeName, "p1", e.token), nil)
			if got := exchange(t, c, activateFrame); got["StatusCode"] != float64(200) {
				t.Errorf("ActivateServerProcess with a good token: %v", got)
			}
			e.clock.Advance(16 * time.Minute) // past the 15-minute token lifetime
			if _, status, err := dialRaw(t, connectURL(base, e.fleet, computeName, "p2", e.token), nil); err == nil || status != http.StatusForbidden {
				t.Errorf("expired token: HTTP %d, %v; want 403", status, err)
			}
		})
	}
}

// TestMalformedFramesDisturbNothingElse: garbage closes its own connection
// with 1007, bad requests get error answers on a connection that stays
// usable, and other processes' connections keep working.
func TestMalformedFramesDisturbNothingElse(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, opts)
			base := e.Server.SDKEndpoint()
			bystander := mustDial(t, connectURL(base, e.fleet, computeName, "bystander", e.token), nil)
			if got := exchange(t, bystander, activateFrame); got["StatusCode"] != float64(200) {
				t.Fatalf("bystander activation: %v", got)
			}

			garbage := mustDial(t, connectURL(base, e.fleet, computeName, "garbage", e.token), nil)
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := garbage.Write(ctx, websocket.MessageText, []byte("{not json")); err != nil {
				t.Fatal(err)
			}
			_, _, err := garbage.Read(ctx)
			if code := websocket.CloseStatus(err); code != websocket.StatusInvalidFramePayloadData {
				t.Errorf("garbage frame: connection ended with %v (close code %d), want 1007", err, code)
			}

			bad := mustDial(t, connectURL(base, e.fleet, computeName, "bad", e.token), nil)
			for what, frame := range map[string]string{
				"unknown action":  `{"Action":"FlyToTheMoon","RequestId":"r-1"}`,
				"wrong type":      `{"Action":"ActivateServerProcess","RequestId":"r-2","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":"7777"}`,
				"foreign session": `{"Action":"AcceptPlayerSession","RequestId":"r-3","GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/fleet-x/custom-e2e/gs","PlayerSessionId":"psess-1"}`,
				"missing field":   `{"Action":"RemovePlayerSession","RequestId":"r-4"}`,
			} {
				got := exchange(t, bad, frame)
				code, _ := got["StatusCode"].(float64)
				msg, _ := got["ErrorMessage"].(string)
				if code < 400 || msg == "" {
					t.Errorf("%s: answered %v, want an error status and ErrorMessage", what, got)
				}
			}
			if p := e.process(t, e.fleet, "bad"); p.Status == game.ProcessActive {
				t.Errorf("a rejected ActivateServerProcess activated the process")
			}
			if got := exchange(t, bad, activateFrame); got["StatusCode"] != float64(200) {
				t.Errorf("a valid request after bad ones: %v", got)
			}
			if got := exchange(t, bystander, heartbeatFrame); got["StatusCode"] != float64(200) {
				t.Errorf("bystander heartbeat after the garbage: %v", got)
			}
			if got := exchange(t, bad, heartbeatFrame); got["StatusCode"] != float64(200) {
				t.Errorf("heartbeat after bad requests: %v", got)
			}
			e.waitProcesses(t, 2)
		})
	}
}

// TestTLSListener: the process endpoint over TLS, with a self-signed
// certificate, for a raw client and for a Go SDK process, skipping
// verification.
func TestTLSListener(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, opts)
			insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			wss := "wss://" + e.Server.TLSAddr()
			c := mustDial(t, connectURL(wss, e.fleet, computeName, "raw-tls", e.token), insecure)
			if got := exchange(t, c, activateFrame); got["StatusCode"] != float64(200) {
				t.Errorf("ActivateServerProcess over wss: %v", got)
			}
			if got := exchange(t, c, heartbeatFrame); got["StatusCode"] != float64(200) {
				t.Errorf("heartbeat over wss: %v", got)
			}
			if _, status, err := dialRaw(t, connectURL(wss, e.fleet, computeName, "raw-tls-2", "wrong"), insecure); err == nil || status != http.StatusForbidden {
				t.Errorf("wrong token over wss: HTTP %d, %v; want 403", status, err)
			}
			if _, _, err := dialRaw(t, connectURL(wss, e.fleet, computeName, "raw-tls-3", e.token), nil); err == nil {
				t.Errorf("a verifying client accepted the self-signed certificate")
			}

			proc, err := sdk.Init(sdk.ServerParameters{WebSocketURL: wss, ProcessID: "sdk-tls", HostID: computeName,
				FleetID: e.fleet, AuthToken: e.token}, sdk.Options{HTTPClient: insecure, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proc.Destroy() })
			if err := proc.ProcessReady(sdk.ProcessParameters{Port: 7000, OnStartGameSession: func(sdk.GameSession) {}, OnProcessTerminate: func() {}}); err != nil {
				t.Fatal(err)
			}
			e.waitProcesses(t, 2)
		})
	}
}
