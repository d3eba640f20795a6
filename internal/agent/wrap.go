package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/localsdk"
)

// Wrap hosts game binaries that have no server SDK. Each slot of the
// runtime configuration becomes a server process whose SDK connection
// the agent holds: it calls ProcessReady with a game port of its own,
// starts the launch path when a game session is placed, with the
// runtime configuration's parameters as templates of its arguments
// (Session's fields: {{.GamePort}}, {{.GameSessionId}}...) and, in
// leading NAME=VALUE words as in a shell, of its environment, activates
// the session once the binary listens on its port (or at once), reports
// ProcessEnding when the binary exits (a binary a signal ended is
// reported with the signal instead), and turns the service's
// TerminateProcess into SIGTERM, then SIGKILL after Config.StopTimeout.
type Wrap struct {
	// PortMin to PortMax are the game ports handed out, one per process;
	// with both 0 the system picks a free port for each process.
	PortMin, PortMax int
	// ActivateAtOnce activates the game session as soon as the binary has
	// started, instead of once it listens on its port (TCP or UDP).
	ActivateAtOnce bool
	// ListenTimeout bounds the wait for the binary to listen (1 min);
	// then it is stopped.
	ListenTimeout time.Duration
}

// setupError is a launch that failed for the agent's own configuration
// (no free port, a template that does not parse), not for the launch path.
type setupError struct{ error }

// startWrapped starts a wrapped process in s: its goroutine readies the
// SDK connection and waits for a game session to start the binary.
func (a *Agent) startWrapped(s *slot, path string, args []string, now time.Time) (*proc, error) {
	tmpl, err := parseTemplates(args)
	if err != nil {
		return nil, setupError{err}
	}
	port, err := a.takePort()
	if err != nil {
		return nil, setupError{err}
	}
	logDir, err := filepath.Abs(a.cfg.LogDir)
	if err != nil {
		return nil, setupError{err}
	}
	pid := "proc-" + game.NewUUID()
	p := &proc{pid: pid, slot: s, started: now, token: a.token, port: port}
	w := &wrapped{a: a, p: p, conn: a.newConn(pid), path: path, tmpl: tmpl, port: port,
		logDir: logDir}
	w.stop, w.cancel = context.WithCancel(context.Background())
	w.env = append(childEnv(os.Environ()), a.localEnv(p, w.conn)...)
	p.wrap = w
	go w.run() // ends by sending to a.exits; the loop drains it until none run
	return p, nil
}

// errNoPort is a wrapped launch with every port of the range in use.
var errNoPort = errors.New("every game port of the wrapper's range is in use")

// takePort hands out a game port: the lowest free one of the range, or
// one the system finds free (at most 60000, GameLift's highest).
func (a *Agent) takePort() (int, error) {
	w := a.cfg.Wrap
	if w.PortMin == 0 {
		for range 100 {
			ln, err := net.Listen("tcp", ":0")
			if err != nil {
				return 0, err
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			if port <= 60000 && !a.ports[port] {
				a.ports[port] = true
				return port, nil
			}
		}
		return 0, errNoPort
	}
	for port := w.PortMin; port <= w.PortMax; port++ {
		if !a.ports[port] {
			a.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("%w (%d-%d)", errNoPort, w.PortMin, w.PortMax)
}

// freePort gives p's game port back.
func (a *Agent) freePort(p *proc) {
	if p.port != 0 {
		delete(a.ports, p.port)
	}
}

// wrapped is a wrapped process: the SDK connection the agent holds for
// it, and the binary once a game session started it. Its goroutine (run)
// owns the connection; the loop reaches it through signal and hears from
// it through notes and exits.
type wrapped struct {
	a      *Agent // its configuration and channels only
	p      *proc  // read-only here: the loop owns its fields
	conn   *localsdk.Conn
	path   string
	tmpl   *templates
	port   int
	logDir string
	env    []string        // the binary's environment before the session's values
	stop   context.Context // cancelled by a signal while no binary runs
	cancel context.CancelFunc

	mu   sync.Mutex
	cmd  *exec.Cmd // the binary, once started
	done bool      // and it has exited
}

// signal sends sig to the binary's process group; without a binary
// running, the process ends (ProcessEnding) instead.
func (w *wrapped) signal(sig syscall.Signal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd != nil && !w.done {
		signalGroup(w.cmd, sig)
		return
	}
	w.cancel()
}

// Kinds of note a wrapped process sends the loop.
const (
	noteStarted   = "started"   // the binary started (osPID)
	noteActivated = "activated" // the game session is ACTIVE (delay: the wait for the port)
	noteStop      = "stop"      // stop the binary gracefully (why)
)

// note is news from a wrapped process's goroutine for the loop.
type note struct {
	p     *proc
	kind  string
	osPID int
	delay time.Duration
	why   string
}

func (w *wrapped) note(n note) {
	n.p = w.p
	w.a.notes <- n
}

// noted applies a wrapped process's note; notes of a process that has
// exited meanwhile are dropped.
func (a *Agent) noted(n note) {
	if n.p.slot.proc != n.p {
		return
	}
	switch n.kind {
	case noteStarted:
		a.log.Info("game binary started", "pid", n.p.pid, "os_pid", n.osPID, "port", n.p.port)
		a.emit(Event{Kind: EvStarted, PID: n.p.pid, OSPID: n.osPID, Detail: n.p.slot.spec.LaunchPath})
	case noteActivated:
		a.log.Info("game session activated", "pid", n.p.pid, "waited_for_port", n.delay.String())
		a.emit(Event{Kind: EvActivated, PID: n.p.pid, Delay: n.delay})
	case noteStop:
		a.stop(n.p, a.cfg.Now(), n.why)
	}
}

// run is the process's life; its end goes to the loop as an exit.
func (w *wrapped) run() {
	ex := w.host()
	w.conn.Close()
	w.a.exits <- ex
}

// host readies the connection and waits for a game session to play, a
// TerminateProcess or a stop.
func (w *wrapped) host() exit {
	if err := w.ready(); err != nil {
		if w.stop.Err() != nil {
			return exit{p: w.p, how: "stopped before it was ready"}
		}
		return exit{p: w.p, code: 1, how: "the wrapper could not make it ready: " + err.Error()}
	}
	var after uint64
	for {
		evs, closed := w.conn.Events(w.stop, after)
		switch {
		case w.stop.Err() != nil:
			w.ending()
			return exit{p: w.p, how: "stopped while waiting for a game session"}
		case closed:
			return exit{p: w.p, code: 1, how: "its SDK connection was closed"}
		}
		for _, ev := range evs {
			after = ev.Seq
			switch ev.Type {
			case localsdk.EventStartGameSession:
				return w.play(ev.GameSession, after)
			case localsdk.EventProcessTerminate:
				w.ending()
				return exit{p: w.p, how: "ended by TerminateProcess before hosting"}
			}
		}
	}
}

// ready connects and calls ProcessReady with the process's port; a stop
// meanwhile gives up.
func (w *wrapped) ready() error {
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-w.stop.Done():
			w.conn.Close()
		case <-done:
		}
	}()
	err := w.conn.Ready(w.port, []string{w.logDir})
	close(done)
	<-watched
	return err
}

// ending calls ProcessEnding unless the process (the binary, through the
// local SDK) already did.
func (w *wrapped) ending() {
	if !w.conn.State().Ready {
		return
	}
	if err := w.conn.ProcessEnding(); err != nil {
		w.a.log.Warn("ProcessEnding for the wrapped game failed", "pid", w.p.pid, "err", err)
	}
}

// values are the templates' values for game session gs.
func (w *wrapped) values(gs *localsdk.GameSession) Session {
	props, _ := json.Marshal(gs.GameProperties)
	return Session{GameSessionId: gs.GameSessionId, GameSessionName: gs.Name, FleetId: gs.FleetId,
		IpAddress: gs.IpAddress, DNSName: gs.DnsName, GamePort: gs.Port, MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount,
		GameProperties: string(props), Property: gs.GameProperties, GameSessionData: gs.GameSessionData,
		MatchmakerData: gs.MatchmakerData, LogDirectory: filepath.Join(w.logDir, w.p.pid), ProcessId: w.p.pid}
}

// play runs the binary for game session gs until it exits; after is the
// Seq of the start event.
func (w *wrapped) play(gs *localsdk.GameSession, after uint64) exit {
	vals := w.values(gs)
	cmd, closeLogs, err := w.command(vals)
	if err == nil {
		w.mu.Lock()
		if err = w.stop.Err(); err == nil {
			if err = cmd.Start(); err == nil {
				w.cmd = cmd
			}
		}
		w.mu.Unlock()
		if err != nil {
			closeLogs()
		}
	}
	if err != nil {
		w.ending()
		if w.stop.Err() != nil {
			return exit{p: w.p, how: "stopped before its game started"}
		}
		w.a.log.Error("cannot start the wrapped game", "pid", w.p.pid, "launch_path", w.path, "err", err)
		return exit{p: w.p, code: 1, how: "the game could not start: " + err.Error()}
	}
	began := time.Now()
	// The listen timeout runs from the start, set before the start is
	// announced: whoever hears of the start and then moves the clock
	// moves it past this deadline.
	listenBy := w.a.cfg.Wake(w.a.cfg.Now().Add(w.a.cfg.Wrap.ListenTimeout))
	w.note(note{kind: noteStarted, osPID: cmd.Process.Pid})
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		closeLogs()
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
		close(exited)
	}()
	ctx, stopFollowing := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		w.follow(ctx, after)
	}()
	w.activate(exited, began, listenBy)
	<-exited
	stopFollowing()
	<-followed
	// A binary that exited ends the process with ProcessEnding; one a
	// signal ended is reported as such, so that the service tells a
	// graceful stop from a crash or a kill (GameLift's events).
	if cmd.ProcessState.Exited() {
		w.ending()
	}
	return exitOf(w.p, cmd.ProcessState)
}

// command is the binary's command for the session's values, its output
// going to <log dir>/<pid>.stdout.log and .stderr.log; closeLogs closes
// those files.
func (w *wrapped) command(vals Session) (cmd *exec.Cmd, closeLogs func(), err error) {
	args, env, err := w.tmpl.expand(vals)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(vals.LogDirectory, 0o755); err != nil {
		return nil, nil, err
	}
	open := func(stream string) (*os.File, error) {
		return os.OpenFile(filepath.Join(w.logDir, w.p.pid+"."+stream+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	stdout, err := open("stdout")
	if err != nil {
		return nil, nil, err
	}
	stderr, err := open("stderr")
	if err != nil {
		stdout.Close()
		return nil, nil, err
	}
	cmd = exec.Command(w.path, args...)
	cmd.Dir = w.a.cfg.WorkDir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(append(slices.Clone(w.env), SessionEnv(vals)...), env...)
	ownGroup(cmd)
	return cmd, func() { stdout.Close(); stderr.Close() }, nil
}

// activate activates the game session once the binary listens on its
// port (or at once); a binary that does not listen in time is stopped.
func (w *wrapped) activate(exited <-chan struct{}, began time.Time, listenBy <-chan time.Time) {
	if !w.a.cfg.Wrap.ActivateAtOnce && !w.waitListening(exited, listenBy) {
		return
	}
	waited := time.Since(began)
	if err := w.conn.ActivateGameSession(); err != nil {
		w.note(note{kind: noteStop, why: "activating its game session failed: " + err.Error()})
		return
	}
	w.note(note{kind: noteActivated, delay: waited})
}

// listenPoll is how often the wrapper looks whether the binary listens.
const listenPoll = 2 * time.Millisecond

// waitListening waits until something listens on the process's port; it
// reports false when the binary exited first or timeout came (then the
// binary is asked to stop).
func (w *wrapped) waitListening(exited <-chan struct{}, timeout <-chan time.Time) bool {
	tick := time.NewTicker(listenPoll)
	defer tick.Stop()
	for !listening(w.port) {
		select {
		case <-exited:
			return false
		case <-timeout:
			w.note(note{kind: noteStop, why: fmt.Sprintf("its game did not listen on port %d within %s", w.port, w.a.cfg.Wrap.ListenTimeout)})
			return false
		case <-tick.C:
		}
	}
	return true
}

// follow turns a TerminateProcess that comes while the binary runs into
// a graceful stop of the binary.
func (w *wrapped) follow(ctx context.Context, after uint64) {
	for {
		evs, closed := w.conn.Events(ctx, after)
		if ctx.Err() != nil || closed {
			return
		}
		for _, ev := range evs {
			after = ev.Seq
			if ev.Type == localsdk.EventProcessTerminate {
				w.note(note{kind: noteStop, why: "the service asked it to end (TerminateProcess)"})
			}
		}
	}
}
