package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/sdkwire"
)

// Paths of the internal listener.
const (
	PushPath       = "/node/v1/push"
	DisconnectPath = "/node/v1/disconnect"
	PingPath       = "/node/v1/ping"
	WakePath       = "/node/v1/wake"
	// WakePlacerPath wakes the placer only (WakePath also has the node
	// read the leases).
	WakePlacerPath = "/node/v1/wake-placer"
	// MatchPath takes a matchmaking step for a game session of a fleet
	// this node owns (flexmatch.FleetMatchCall), as JSON.
	MatchPath = "/node/v1/match"
)

// maxBody bounds a forwarded request.
const maxBody = 1 << 20

// message is a forwarded push or disconnect.
type message struct {
	FleetID     string          `json:"FleetId"`
	ComputeName string          `json:"ComputeName"`
	PID         string          `json:"PID"`
	Frame       json.RawMessage `json:"Frame,omitempty"`  // the push frame, as the process will read it
	Reason      string          `json:"Reason,omitempty"` // of a disconnect
}

type reply struct {
	Delivered bool `json:"Delivered"`
}

// Local delivers to the processes connected to this node only, is woken
// (Wake: a fleet handed over is now this node's to act on; WakePlacer: a
// placement is), and runs the
// matchmaking steps that write game sessions of the fleets it owns.
type Local interface {
	PushLocal(p processes.Ref, msg sdkwire.Push) bool
	DisconnectLocal(p processes.Ref, reason string) bool
	Wake()
	WakePlacer()
	RunFleetMatch(ctx context.Context, call *flexmatch.FleetMatchCall) error
}

// Handler serves the internal listener: signed pushes and disconnects for
// processes connected here, and requests relayed to this node (relays).
// Unsigned, stale, replayed or forged requests are refused with 401 and
// logged (without their content).
func Handler(v *Verifier, local Local, relays Relays, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	relays.mount(mux, v, log)
	mux.HandleFunc("POST "+PushPath, func(w http.ResponseWriter, r *http.Request) {
		m, ok := readSigned(w, r, v, log)
		if !ok {
			return
		}
		f, err := sdkwire.DecodeFrame(m.Frame)
		var p sdkwire.Push
		if err == nil {
			p, err = sdkwire.DecodePush(f)
		}
		if err != nil {
			http.Error(w, "bad push frame", http.StatusBadRequest)
			return
		}
		answer(w, local.PushLocal(m.ref(), p))
	})
	mux.HandleFunc("POST "+DisconnectPath, func(w http.ResponseWriter, r *http.Request) {
		if m, ok := readSigned(w, r, v, log); ok {
			answer(w, local.DisconnectLocal(m.ref(), m.Reason))
		}
	})
	mux.HandleFunc("POST "+PingPath, func(w http.ResponseWriter, r *http.Request) {
		if checkSmall(w, r, v, log) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST "+WakePath, func(w http.ResponseWriter, r *http.Request) {
		if checkSmall(w, r, v, log) {
			local.Wake()
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST "+WakePlacerPath, func(w http.ResponseWriter, r *http.Request) {
		if checkSmall(w, r, v, log) {
			local.WakePlacer()
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST "+MatchPath, func(w http.ResponseWriter, r *http.Request) {
		body, ok := readSignedBody(w, r, v, log)
		if !ok {
			return
		}
		var call flexmatch.FleetMatchCall
		if err := json.Unmarshal(body, &call); err != nil {
			http.Error(w, "bad matchmaking call", http.StatusBadRequest)
			return
		}
		if err := local.RunFleetMatch(r.Context(), &call); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// checkSmall checks the signature of a request whose body is small and
// unused (a ping, a wake), and answers the request when it does not hold.
func checkSmall(w http.ResponseWriter, r *http.Request, v *Verifier, log *slog.Logger) bool {
	if _, err := v.CheckHeaders(r); err != nil {
		refuse(w, r, err, log)
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return false
	}
	if err := v.Verify(r, body); err != nil {
		refuse(w, r, err, log)
		return false
	}
	return true
}

// refuse answers a request whose signature does not hold with 401 and
// logs it (without its content).
func refuse(w http.ResponseWriter, r *http.Request, err error, log *slog.Logger) {
	log.Warn("refused a node request", "remote", r.RemoteAddr, "path", r.URL.Path, "reason", err)
	w.Header().Set("Connection", "close")
	http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
}

func (m *message) ref() processes.Ref {
	return processes.Ref{FleetID: m.FleetID, ComputeName: m.ComputeName, PID: m.PID}
}

// readSignedBody reads a signed request's body of at most maxBody bytes
// and checks its signature; it answers the request when either fails.
func readSignedBody(w http.ResponseWriter, r *http.Request, v *Verifier, log *slog.Logger) ([]byte, bool) {
	if _, err := v.CheckHeaders(r); err != nil { // before reading a body
		refuse(w, r, err, log)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := v.Verify(r, body); err != nil {
		refuse(w, r, err, log)
		return nil, false
	}
	return body, true
}

func readSigned(w http.ResponseWriter, r *http.Request, v *Verifier, log *slog.Logger) (*message, bool) {
	body, ok := readSignedBody(w, r, v, log)
	if !ok {
		return nil, false
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil || m.PID == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return nil, false
	}
	return &m, true
}

func answer(w http.ResponseWriter, delivered bool) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reply{Delivered: delivered})
}

// Timeout bounds one forwarded request, connection included: a push
// from an API call never waits longer than this on a dead or stuck node.
const Timeout = 3 * time.Second

// ErrPeerDown is returned, without trying, for a node that failed to
// answer within Timeout less than Timeout ago: a loop pushing to many
// processes of one stuck node waits on it once, not once per process.
// What is not delivered is sent again when the process reconnects.
var ErrPeerDown = errors.New("node did not answer moments ago; not tried")

// Client forwards to other nodes.
type Client struct {
	secret  []byte
	http    *http.Client
	relay   *http.Client // relayed API calls (relay.go)
	now     func() time.Time
	timeout time.Duration
	// self is this node's own forwarding address (SetSelf).
	self string

	mu   sync.Mutex
	down map[string]time.Time // base URL → until when it is skipped
}

// SetSelf tells the client this node's own forwarding address, to which
// it never sends a relayed call back. Call it before the client is used.
func (c *Client) SetSelf(base string) { c.self = base }

// NewClient returns a Client signing with secret; now is time.Now when nil.
func NewClient(secret []byte, now func() time.Time) *Client {
	return newClient(secret, now, Timeout)
}

func newClient(secret []byte, now func() time.Time, timeout time.Duration) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{secret: secret, now: now, timeout: timeout, http: &http.Client{Timeout: timeout}, relay: relayClient(timeout),
		down: map[string]time.Time{}}
}

// skip reports whether base failed moments ago.
func (c *Client) skip(base string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.down[base]
	if ok && !c.now().Before(until) {
		delete(c.down, base)
		return false
	}
	return ok
}

// mark records whether base answered.
func (c *Client) mark(base string, answered bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if answered {
		delete(c.down, base)
	} else {
		c.down[base] = c.now().Add(c.timeout)
	}
}

// Push forwards msg for process p to the node at base (http://host:port)
// and reports whether that node had the process connected.
func (c *Client) Push(ctx context.Context, base string, p processes.Ref, msg sdkwire.Push) (bool, error) {
	frame, err := sdkwire.EncodePush(msg)
	if err != nil {
		return false, err
	}
	return c.send(ctx, base, PushPath, message{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID, Frame: frame})
}

// Disconnect asks the node at base to close p's connections for good.
func (c *Client) Disconnect(ctx context.Context, base string, p processes.Ref, reason string) (bool, error) {
	return c.send(ctx, base, DisconnectPath, message{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID, Reason: reason})
}

func (c *Client) send(ctx context.Context, base, path string, m message) (bool, error) {
	if c.skip(base) {
		return false, ErrPeerDown
	}
	body, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	url := base + path
	req, err := c.signedPost(ctx, url, "application/json", body)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	c.mark(base, err == nil || errors.Is(ctx.Err(), context.Canceled)) // a caller that gave up blames no one
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return false, fmt.Errorf("node %s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	var r reply
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&r); err != nil {
		return false, err
	}
	return r.Delivered, nil
}

// signedPost is a POST of body to url, signed.
func (c *Client) signedPost(ctx context.Context, url, contentType string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	sign(req, c.secret, c.now(), body)
	return req, nil
}

// ErrRefused is returned by Ping when the other node refused this node's
// signature: the nodes do not share one secret, or their clocks are
// further apart than the signing window.
var ErrRefused = errors.New("refused this node's signature")

// Ping checks that the node at base answers and accepts this node's
// signature. A node too old to know the ping answers 404, which counts as
// an answer: nil.
func (c *Client) Ping(ctx context.Context, base, from string) error {
	body, err := json.Marshal(struct{ From string }{from})
	if err != nil {
		return err
	}
	req, err := c.signedPost(ctx, base+PingPath, "application/json", body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch resp.StatusCode {
	case http.StatusNoContent, http.StatusOK, http.StatusNotFound:
		return nil
	case http.StatusUnauthorized:
		return fmt.Errorf("%w (%s)", ErrRefused, strings.TrimSpace(strings.TrimPrefix(string(b), "unauthorized: ")))
	}
	return fmt.Errorf("node %s answered %d: %s", base, resp.StatusCode, strings.TrimSpace(string(b)))
}

// Wake asks the node at base to read the leases now and run its placer:
// it has been handed a fleet.
func (c *Client) Wake(ctx context.Context, base string) error {
	return c.call(ctx, base, WakePath, []byte("{}"))
}

// WakePlacer asks the node at base to run its placer: a placement waits
// for a fleet that node owns. A node too old to know it is woken whole.
func (c *Client) WakePlacer(ctx context.Context, base string) error {
	err := c.call(ctx, base, WakePlacerPath, []byte("{}"))
	if errors.Is(err, errUnknownPath) {
		return c.Wake(ctx, base)
	}
	return err
}

// errUnknownPath: the other node answered 404 (an older version).
var errUnknownPath = errors.New("path not known")

// Match asks the node at base, which owns the fleet of the game session
// call writes, to run it (flexmatch.RunFleetMatch); nil when it did.
func (c *Client) Match(ctx context.Context, base string, call *flexmatch.FleetMatchCall) error {
	body, err := json.Marshal(call)
	if err != nil {
		return err
	}
	return c.call(ctx, base, MatchPath, body)
}

// call posts body to path on the node at base, signed, and expects 204.
func (c *Client) call(ctx context.Context, base, path string, body []byte) error {
	if c.skip(base) {
		return ErrPeerDown
	}
	req, err := c.signedPost(ctx, base+path, "application/json", body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	c.mark(base, err == nil || errors.Is(ctx.Err(), context.Canceled))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		err := fmt.Errorf("node %s answered %d: %s", base, resp.StatusCode, strings.TrimSpace(string(b)))
		if resp.StatusCode == http.StatusNotFound {
			err = fmt.Errorf("%w: %w", errUnknownPath, err)
		}
		return err
	}
	return nil
}
