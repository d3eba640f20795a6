package soak

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	gl "github.com/anylift/anylift/sdk/server"
)

// style is how a game server process ends after its match.
type style int

const (
	exitAfterMatch style = iota // ProcessEnding and Destroy; a fresh process takes its place
	hostAgain                   // the program starts its next process first, then ends this one
	notified                    // session-notification style: ends when its last player leaves
	terminated                  // TerminateGameSession through the API; OnProcessTerminate ends it
	crashed                     // Destroy without ProcessEnding: the service finds it lost
	unhealthy                   // reports unhealthy until the service ends it
)

var styleNames = [...]string{"exit", "host again", "notified", "terminated", "crashed", "unhealthy"}

func (s style) String() string { return styleNames[s] }

// styleWeights is the share of each style among new processes, in percent.
var styleWeights = [...]int{exitAfterMatch: 40, hostAgain: 20, notified: 15, terminated: 15, crashed: 5, unhealthy: 5}

func pickStyle(r *rand.Rand) style {
	n := r.IntN(100)
	for s, w := range styleWeights {
		if n < w {
			return style(s)
		}
		n -= w
	}
	return exitAfterMatch
}

// compute is a registered compute and its current auth token.
type compute struct {
	name     string
	location string
	mu       sync.Mutex
	token    string
	issued   time.Time
}

// activation is what a process reports once its game session is ACTIVE.
type activation struct {
	host *host
	id   string // GameSessionId
	err  error
}

// pool keeps game server processes of the Go server SDK connected and
// ready: whenever fewer than target are waiting for a game session, it
// starts more. It hands each activated session to whoever waits for it by
// name.
type pool struct {
	url      string // ws://... of the process endpoint
	fleet    string
	computes []*compute
	gl       *gamelift.Client // for GetComputeAuthToken
	st       *stats
	target   int

	seq      atomic.Int64
	idle     atomic.Int64 // ready and without a game session
	starting atomic.Int64
	live     atomic.Int64 // connected, not yet destroyed
	wg       sync.WaitGroup

	mu    sync.Mutex
	wait  map[string]chan activation // by game session name
	hosts map[*host]bool
}

// host is one game server process.
type host struct {
	p        *pool
	style    style
	pid      string
	proc     *gl.Process
	healthy  atomic.Bool
	reported atomic.Bool
	mu       sync.Mutex
	ready    bool           // ProcessReady has answered
	took     bool           // a game session was started on it
	gs       gl.GameSession // in the notification style, from OnCreateSessionBegin
	ended    chan struct{}  // closed once destroyed
	once     sync.Once
}

func (p *pool) waiter(name string) chan activation {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.wait[name]
	if !ok {
		ch = make(chan activation, 1)
		p.wait[name] = ch
	}
	return ch
}

// await waits for the activation of game session name.
func (p *pool) await(ctx context.Context, name string) activation {
	ch := p.waiter(name)
	defer func() {
		p.mu.Lock()
		delete(p.wait, name)
		p.mu.Unlock()
	}()
	select {
	case a := <-ch:
		return a
	case <-time.After(30 * time.Second):
		return activation{err: kindError("no activation within 30 s")}
	case <-ctx.Done():
		return activation{err: ctx.Err()}
	}
}

// token returns c's auth token, asking for a new one once it is five
// minutes old (tokens live 15 minutes).
func (p *pool) token(ctx context.Context, c *compute) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && time.Since(c.issued) < 5*time.Minute {
		return c.token, nil
	}
	out, err := p.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(p.fleet), ComputeName: aws.String(c.name)})
	p.st.record("GetComputeAuthToken", err)
	if err != nil {
		return "", err
	}
	c.token, c.issued = aws.ToString(out.AuthToken), time.Now()
	return c.token, nil
}

// keepFilled starts processes until ctx ends, so that target are ready.
func (p *pool) keepFilled(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	for {
		for int(p.idle.Load()+p.starting.Load()) < p.target && ctx.Err() == nil {
			p.starting.Add(1)
			s := pickStyle(r)
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer p.starting.Add(-1)
				p.start(ctx, s)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func sdkOptions() gl.Options {
	return gl.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Exit: func(int) {},
		Getenv: func(string) string { return "" }, HealthCheckInterval: 5 * time.Second, HealthCheckJitter: time.Second,
		ConnectAttempts: 3, ReconnectMin: 100 * time.Millisecond, ReconnectMax: 2 * time.Second}
}

// start connects one process of style s and makes it ready.
func (p *pool) start(ctx context.Context, s style) {
	n := p.seq.Add(1)
	c := p.computes[int(n)%len(p.computes)]
	tok, err := p.token(ctx, c)
	if err != nil {
		return
	}
	h := &host{p: p, style: s, pid: fmt.Sprintf("soak-%d", n), ended: make(chan struct{})}
	h.healthy.Store(true)
	h.proc, err = gl.Init(gl.ServerParameters{WebSocketURL: p.url, ProcessID: h.pid, HostID: c.name, FleetID: p.fleet, AuthToken: tok}, sdkOptions())
	p.st.record("sdk Init", err)
	if err != nil {
		return
	}
	p.live.Add(1)
	p.mu.Lock()
	p.hosts[h] = true
	p.mu.Unlock()
	port := 7000 + int(n%50000)
	if s == notified {
		err = h.proc.NotifyProcessReady(port, nil, gl.Notifications{
			OnCreateSessionBegin: func(gs gl.GameSession) bool { h.take(gs); return true },
			OnCreateSessionEnd:   func() { h.report(h.session(), nil) },
			OnDestroySessionEnd:  func() { h.report(h.session(), kindError("destroyed before activation")); h.finish() },
		})
	} else {
		err = h.proc.ProcessReady(gl.ProcessParameters{Port: port,
			OnStartGameSession: func(gs gl.GameSession) {
				h.take(gs)
				err := h.proc.ActivateGameSession()
				p.st.record("sdk ActivateGameSession", err)
				h.report(gs, err)
			},
			OnProcessTerminate: func() { h.end() },
			OnHealthCheck:      func() bool { return h.healthy.Load() },
		})
	}
	p.st.record("sdk ProcessReady", err)
	if err != nil {
		h.proc.Destroy()
		h.finish()
		return
	}
	h.mu.Lock()
	h.ready = true
	if !h.took {
		p.idle.Add(1)
	}
	h.mu.Unlock()
}

// take records the game session started on h; h is no longer idle.
func (h *host) take(gs gl.GameSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready && !h.took {
		h.p.idle.Add(-1)
	}
	h.took, h.gs = true, gs
}

func (h *host) session() gl.GameSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gs
}

// report hands the activated (or failed) game session to its waiter, once.
func (h *host) report(gs gl.GameSession, err error) {
	if h.reported.Swap(true) {
		return
	}
	h.p.waiter(gs.Name) <- activation{host: h, id: gs.GameSessionID, err: err}
}

// end is what a game does when its match is over: ProcessEnding, Destroy.
func (h *host) end() {
	h.p.st.record("sdk ProcessEnding", h.proc.ProcessEnding())
	h.proc.Destroy()
	h.finish()
}

// finish forgets h once it is destroyed.
func (h *host) finish() {
	h.once.Do(func() {
		p := h.p
		p.live.Add(-1)
		p.mu.Lock()
		delete(p.hosts, h)
		p.mu.Unlock()
		close(h.ended)
	})
}

// closeAll destroys every process still connected (at the end of the run).
func (p *pool) closeAll() {
	p.wg.Wait()
	p.mu.Lock()
	var all []*host
	for h := range p.hosts {
		all = append(all, h)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.proc.ProcessEnding()
			h.proc.Destroy()
			h.finish()
		}()
	}
	wg.Wait()
}
