package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/coder/websocket"
)

// Process is one game server process's link to the service: its
// connection, the requests waiting for answers, and what the pushes told
// it. Create it with Init; end it with Destroy. Its methods are safe for
// concurrent use.
type Process struct {
	params ServerParameters // after the environment
	opts   Options
	ctx    context.Context // cancelled by Destroy
	cancel context.CancelFunc
	wg     sync.WaitGroup // readers, the reconnector and the heartbeat loop

	mu        sync.Mutex
	conn      *websocket.Conn // current; nil while reconnecting
	connected chan struct{}   // closed when conn is set; replaced when it is lost
	endpoint  string          // current base URL (RefreshConnection changes it)
	token     string          // current auth token
	idem      string          // IdempotencyToken of the current connect cycle
	pending   map[string]*call
	old       []*websocket.Conn // refreshed-away connections still draining

	state
}

// call is a request waiting for its answer.
type call struct {
	frame  []byte
	answer chan *sdkwire.Frame
}

// connectURL returns the endpoint with the SDK's query, replacing any
// query the endpoint had.
func (p *Process) connectURL(endpoint, token, idem string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.RawQuery = url.Values{
		"pID":              {p.params.ProcessID},
		"sdkVersion":       {SdkVersion},
		"sdkLanguage":      {SdkLanguage},
		"ComputeId":        {p.params.HostID},
		"FleetId":          {p.params.FleetID},
		"IdempotencyToken": {idem},
		"Authorization":    {token},
	}.Encode()
	return u.String(), nil
}

// dial opens one connection to endpoint with token.
func (p *Process) dial(endpoint, token, idem string) (*websocket.Conn, error) {
	u, err := p.connectURL(endpoint, token, idem)
	if err != nil {
		return nil, errorf(LocalConnectionFailed, "bad WebSocket URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.opts.RequestTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: p.opts.HTTPClient})
	if err != nil {
		// The dialer's error quotes the URL, whose query holds the token.
		msg := sdkwire.RedactToken(err.Error(), token)
		if resp != nil {
			msg = resp.Status + ": " + refusal(resp, token)
		}
		return nil, errorf(LocalConnectionFailed, "%s", msg)
	}
	c.SetReadLimit(1 << 20)
	return c, nil
}

// refusal says why the service answered a connection with resp: a
// handshake refused (401, 403) is the process's to fix; any other answer
// (a 500 while the fleet moves between nodes, a 503 while the service
// drains) is the service's, which a later attempt may get past, and its
// first line of text says why.
func refusal(resp *http.Response, token string) string {
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return "the process id must be unique and the auth token correct and unexpired"
	}
	why := "the service did not take the connection"
	if resp.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n"); line != "" {
			why += " (" + sdkwire.RedactToken(line, token) + ")"
		}
	}
	return why
}

// dialRetrying dials until it succeeds, attempts run out (0: forever) or
// the Process is destroyed, waiting ReconnectMin, doubling up to
// ReconnectMax, between attempts.
func (p *Process) dialRetrying(attempts int) (*websocket.Conn, error) {
	wait := p.opts.ReconnectMin
	for i := 1; ; i++ {
		p.mu.Lock()
		endpoint, token, idem := p.endpoint, p.token, p.idem
		p.mu.Unlock()
		c, err := p.dial(endpoint, token, idem)
		if err == nil {
			return c, nil
		}
		if attempts > 0 && i >= attempts {
			return nil, err
		}
		p.opts.Logger.Warn("connecting to the service failed; retrying", "err", err, "in", wait)
		select {
		case <-p.ctx.Done():
			return nil, errorf(LocalConnectionFailed, "destroyed")
		case <-time.After(wait):
		}
		wait = min(2*wait, p.opts.ReconnectMax)
	}
}

// use makes c the current connection, starts its reader and resends every
// request still waiting (the service answers a repeated RequestId once).
// A RefreshConnection that arrives while the Process reconnects opens a
// connection of its own: the later of the two is current (the service
// pushes to a process's newest connection), the other closes after
// DrainTimeout, as after a refresh.
func (p *Process) use(c *websocket.Conn) {
	p.mu.Lock()
	if old := p.conn; old != nil {
		p.old = append(p.old, old)
		go func() {
			select {
			case <-time.After(p.opts.DrainTimeout):
			case <-p.ctx.Done():
			}
			old.Close(1000, "connection replaced")
		}()
	}
	p.conn = c
	select {
	case <-p.connected: // a refresh and a reconnect both ended here
	default:
		close(p.connected)
	}
	frames := make([][]byte, 0, len(p.pending))
	for _, cl := range p.pending {
		frames = append(frames, cl.frame)
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go p.readLoop(c)
	for _, f := range frames {
		p.write(c, f)
	}
}

// lost is called by c's reader when c fails. If c is still current the
// Process reconnects, for as long as it takes, until Destroy.
func (p *Process) lost(c *websocket.Conn) {
	p.mu.Lock()
	if p.conn != c || p.ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.conn = nil
	p.connected = make(chan struct{})
	p.wg.Add(1)
	p.mu.Unlock()
	c.CloseNow()
	go func() {
		defer p.wg.Done()
		nc, err := p.dialRetrying(0)
		if err != nil {
			return
		}
		p.use(nc)
	}()
}

func (p *Process) readLoop(c *websocket.Conn) {
	defer p.wg.Done()
	for {
		_, b, err := c.Read(p.ctx)
		if err != nil {
			p.lost(c)
			return
		}
		p.receive(b)
	}
}

// receive routes one frame: an error answer or an answer to its waiting
// request, a push to its handler (in a goroutine of its own, so that a
// callback may make requests). Unparsable frames are dropped.
func (p *Process) receive(b []byte) {
	f, err := sdkwire.DecodeFrame(b)
	if err != nil {
		p.opts.Logger.Debug("dropping an unreadable frame", "err", err)
		return
	}
	if (f.StatusCode == sdkwire.StatusOK || f.RequestId == "") && sdkwire.IsPushAction(f.Action) {
		go p.onPush(f)
		return
	}
	p.mu.Lock()
	cl := p.pending[f.RequestId]
	delete(p.pending, f.RequestId)
	p.mu.Unlock()
	if cl != nil {
		cl.answer <- f
	}
}

// write sends frame on c; a failure is left to c's reader to notice.
func (p *Process) write(c *websocket.Conn, frame []byte) {
	ctx, cancel := context.WithTimeout(p.ctx, p.opts.RequestTimeout)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, frame); err != nil {
		p.opts.Logger.Debug("write failed", "err", err)
	}
}

// call sends r and waits up to timeout for its answer, across reconnects.
// It returns the answer frame of a success.
func (p *Process) call(r sdkwire.Request, timeout time.Duration) (*sdkwire.Frame, error) {
	id := newID()
	frame, err := sdkwire.EncodeRequest(id, r)
	if err != nil {
		return nil, errorf(Validation, "%v", err)
	}
	cl := &call{frame: frame, answer: make(chan *sdkwire.Frame, 1)}
	p.mu.Lock()
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		return nil, errorf(NotInitialized, "the SDK was destroyed")
	}
	p.pending[id] = cl
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		p.write(c, frame) // else use() sends it on reconnect
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case f := <-cl.answer:
		if f.StatusCode != sdkwire.StatusOK {
			return nil, errorForStatus(f.StatusCode, f.ErrorMessage)
		}
		return f, nil
	case <-timer.C:
	case <-p.ctx.Done():
	}
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
	return nil, errorf(ServiceCallFailed, "%s got no answer", r.Action())
}
