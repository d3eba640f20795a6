package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	gl "github.com/anylift/anylift/sdk/server"
)

// startProcServer starts a server for the whole run like startServer, with
// auth tokens that outlive the run (processes of the pool connect minutes
// after the fleet's tokens were issued); opts change its configuration.
func startProcServer(b *testing.B, storeURL, sqliteSync string, opts ...func(*server.Config)) *server.Server {
	dir, err := os.MkdirTemp("", "anylift-bench-")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	if storeURL != "" {
		storeURL = freshSchema(b, storeURL)
	}
	cfg := server.Config{
		Listen: "127.0.0.1:0", DataDir: dir, Store: storeURL, Region: apitest.Region, AccountID: accountID,
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, AuthTokenTTL: 24 * time.Hour,
		SQLiteSynchronous: sqliteSync,
		Log:               slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { closeServer(srv) })
	return srv
}

var closed sync.Map // *server.Server already closed by closeServer

// closeServer closes srv once, however often it is called.
func closeServer(srv *server.Server) {
	if _, done := closed.LoadOrStore(srv, true); done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.Close(ctx)
}

// sdkOptions are the Go server SDK's defaults (60 s health checks), quiet,
// and never exiting the benchmark.
func sdkOptions() gl.Options {
	return gl.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Exit: func(int) {},
		Getenv: func(string) string { return "" }, ConnectAttempts: 3, ReconnectMin: 50 * time.Millisecond}
}

var pidSeq atomic.Int64

// started is what a process tells the benchmark once it has activated the
// game session it was given.
type started struct {
	proc *gl.Process
	err  error
}

// pool keeps server processes of the Go server SDK connected and ready, and
// matches each started game session to the process that activated it.
type pool struct {
	fleet  *benchFleet
	prefix string
	// byName reports activations by game session name instead of id (the
	// queue benchmark names each session after its placement).
	byName bool

	mu   sync.Mutex
	idle []*gl.Process           // ready, never given a session (as far as we know)
	wait map[string]chan started // by GameSessionId, made by whichever side comes first
}

func newPool(f *benchFleet, prefix string) *pool {
	return &pool{fleet: f, prefix: prefix, wait: map[string]chan started{}}
}

// waiter returns the channel on which the activation of game session id
// is reported.
func (p *pool) waiter(id string) chan started {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.wait[id]
	if !ok {
		ch = make(chan started, 1)
		p.wait[id] = ch
	}
	return ch
}

// awaitActive blocks until the process hosting game session id has
// activated it, and returns that process.
func (p *pool) awaitActive(id string) (*gl.Process, error) {
	ch := p.waiter(id)
	select {
	case s := <-ch:
		p.mu.Lock()
		delete(p.wait, id)
		p.mu.Unlock()
		return s.proc, s.err
	case <-time.After(20 * time.Second):
		return nil, fmt.Errorf("game session %s: no activation after 20 s", id)
	}
}

// connect starts one SDK process: Init, then ProcessReady with an
// OnStartGameSession that activates the session and reports it.
func (p *pool) connect() (*gl.Process, error) {
	c := p.fleet.Computes[int(pidSeq.Load())%len(p.fleet.Computes)]
	pid := fmt.Sprintf("%s-%d", p.prefix, pidSeq.Add(1))
	proc, err := gl.Init(gl.ServerParameters{WebSocketURL: p.fleet.wsURL(), ProcessID: pid, HostID: c.Name,
		FleetID: p.fleet.FleetID, AuthToken: c.Token}, sdkOptions())
	if err != nil {
		return nil, err
	}
	err = proc.ProcessReady(gl.ProcessParameters{
		Port: 7000 + int(pidSeq.Load()%50000),
		OnStartGameSession: func(gs gl.GameSession) {
			err := proc.ActivateGameSession()
			key := gs.GameSessionID
			if p.byName {
				key = gs.Name
			}
			p.waiter(key) <- started{proc, err}
		},
		OnProcessTerminate: func() {},
	})
	if err != nil {
		proc.Destroy()
		return nil, err
	}
	return proc, nil
}

// fill connects processes, conc at a time, until n are idle.
func (p *pool) fill(tb testing.TB, n, conc int) {
	p.mu.Lock()
	missing := n - len(p.idle)
	p.mu.Unlock()
	if missing <= 0 {
		return
	}
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	work := make(chan struct{}, missing)
	for range missing {
		work <- struct{}{}
	}
	close(work)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				proc, err := p.connect()
				if err != nil {
					errs <- err
					return
				}
				p.mu.Lock()
				p.idle = append(p.idle, proc)
				p.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
}

// retire ends processes that hosted a session (ProcessEnding, which ends
// the session, then Destroy), conc at a time, and drops them from idle.
func (p *pool) retire(procs []*gl.Process, conc int) {
	used := make(map[*gl.Process]bool, len(procs))
	for _, x := range procs {
		used[x] = true
	}
	p.mu.Lock()
	kept := p.idle[:0]
	for _, x := range p.idle {
		if !used[x] {
			kept = append(kept, x)
		}
	}
	p.idle = kept
	p.mu.Unlock()
	closeAll(procs, conc, func(x *gl.Process) { x.ProcessEnding(); x.Destroy() })
}

// closeAll runs end on every process, conc at a time.
func closeAll(procs []*gl.Process, conc int, end func(*gl.Process)) {
	var wg sync.WaitGroup
	ch := make(chan *gl.Process)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := range ch {
				end(x)
			}
		}()
	}
	for _, x := range procs {
		ch <- x
	}
	close(ch)
	wg.Wait()
}
