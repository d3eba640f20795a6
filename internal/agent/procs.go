package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/wire"
)

// spec is one server process type of the runtime configuration.
type spec struct{ LaunchPath, Parameters string }

// slot is one place for a process: copy j of a spec.
type slot struct {
	key       string
	spec      spec
	proc      *proc // nil while nothing runs in it
	removed   bool  // no longer in the configuration: drop it when empty
	nextStart time.Time
	backoff   backoff
}

// proc is one running server process.
type proc struct {
	pid      string
	slot     *slot
	cmd      *exec.Cmd
	token    string // the auth token it was given, kept out of logged output
	started  time.Time
	stopping string    // "" or control.StoppedTerminated once SIGTERM was sent
	killAt   time.Time // when SIGKILL follows the SIGTERM
	killed   bool
	// readyAsked: the service was asked, ReadyTimeout after the launch,
	// whether the process called ProcessReady.
	readyAsked bool
}

// exit is a process's end, sent by its waiter goroutine.
type exit struct {
	p     *proc
	state *os.ProcessState
}

// apply makes the slots match a runtime configuration: new slots start
// now, slots no longer wanted are stopped gracefully.
func (a *Agent) apply(ctx context.Context, now time.Time, rc *types.RuntimeConfiguration) {
	want := map[string]spec{}
	if rc != nil {
		for _, sp := range rc.ServerProcesses {
			s := spec{LaunchPath: aws.ToString(sp.LaunchPath), Parameters: aws.ToString(sp.Parameters)}
			for j := range int(aws.ToInt32(sp.ConcurrentExecutions)) {
				want[fmt.Sprintf("%s\x00%s\x00%d", s.LaunchPath, s.Parameters, j)] = s
			}
		}
	}
	changed := false
	for key, s := range want {
		if old, ok := a.slots[key]; ok && !old.removed {
			continue
		}
		a.slots[key] = &slot{key: key, spec: s, nextStart: now, backoff: backoff{min: a.cfg.BackoffMin, max: a.cfg.BackoffMax}}
		changed = true
	}
	for key, s := range a.slots {
		if _, ok := want[key]; ok || s.removed {
			continue
		}
		changed = true
		s.removed = true
		if s.proc == nil {
			delete(a.slots, key)
			continue
		}
		a.stop(s.proc, now, "no longer in the runtime configuration")
	}
	if changed && rc != nil {
		a.log.Info("runtime configuration applied", "processes", len(want),
			"max_concurrent_activations", aws.ToInt32(rc.MaxConcurrentGameSessionActivations),
			"activation_timeout_seconds", aws.ToInt32(rc.GameSessionActivationTimeoutSeconds))
		a.emit(Event{Kind: EvConfig, Detail: fmt.Sprint(len(want))})
	}
}

// launchDue starts the processes of the slots whose time has come, in
// key order.
func (a *Agent) launchDue(ctx context.Context, now time.Time) {
	keys := make([]string, 0, len(a.slots))
	for k, s := range a.slots {
		if s.proc == nil && !s.removed && !now.Before(s.nextStart) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.launch(a.slots[k], now)
	}
}

// launch starts one process in s. A launch path that does not exist or
// cannot run is reported as SERVER_PROCESS_INVALID_PATH and retried after
// the slot's backoff.
func (a *Agent) launch(s *slot, now time.Time) {
	path := s.spec.LaunchPath
	if !filepath.IsAbs(path) && a.cfg.WorkDir != "" {
		path = filepath.Join(a.cfg.WorkDir, path)
	}
	args, err := SplitParameters(s.spec.Parameters)
	if err == nil {
		err = checkExecutable(path)
	}
	var p *proc
	if err == nil {
		p, err = a.start(s, path, args, now)
	}
	if err != nil {
		a.log.Error("cannot launch server process", "launch_path", s.spec.LaunchPath, "err", err)
		a.emit(Event{Kind: EvLaunchFailed, Detail: err.Error()})
		a.reports.add(api.AgentReport{Kind: "INVALID_PATH", LaunchPath: s.spec.LaunchPath})
		a.delay(s, now)
		return
	}
	s.proc = p
	a.running++
	a.log.Info("server process launched", "pid", p.pid, "os_pid", p.cmd.Process.Pid, "launch_path", s.spec.LaunchPath)
	a.emit(Event{Kind: EvLaunched, PID: p.pid, Detail: s.spec.LaunchPath, OSPID: p.cmd.Process.Pid})
}

func checkExecutable(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("launch path %s: %w", path, errors.Unwrap(err))
	case st.IsDir():
		return fmt.Errorf("launch path %s is a directory", path)
	case st.Mode()&0o111 == 0:
		return fmt.Errorf("launch path %s is not executable", path)
	}
	return nil
}

// start runs the process with its GAMELIFT_SDK_* variables and its output
// going to <log dir>/<pid>.stdout.log and .stderr.log.
func (a *Agent) start(s *slot, path string, args []string, now time.Time) (*proc, error) {
	pid := "proc-" + game.NewUUID()
	if err := os.MkdirAll(a.cfg.LogDir, 0o755); err != nil {
		return nil, err
	}
	stdout, err := os.OpenFile(filepath.Join(a.cfg.LogDir, pid+".stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	stderr, err := os.OpenFile(filepath.Join(a.cfg.LogDir, pid+".stderr.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		stdout.Close()
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = a.cfg.WorkDir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(childEnv(os.Environ()), a.sdkEnv(pid)...)
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		return nil, err
	}
	p := &proc{pid: pid, slot: s, cmd: cmd, started: now, token: a.token}
	go func() { // ends when the process has exited; the loop drains a.exits until none run
		cmd.Wait()
		stdout.Close()
		stderr.Close()
		a.exits <- exit{p: p, state: cmd.ProcessState}
	}()
	return p, nil
}

// sdkEnv is what GameLift's server SDKs read in InitSDK (server-sdk
// protocol §1.4): the environment wins over the process's own flags.
func (a *Agent) sdkEnv(pid string) []string {
	return []string{
		"GAMELIFT_SDK_WEBSOCKET_URL=" + a.sdkEndpoint,
		"GAMELIFT_SDK_AUTH_TOKEN=" + a.token,
		"GAMELIFT_SDK_PROCESS_ID=" + pid,
		"GAMELIFT_SDK_HOST_ID=" + a.cfg.ComputeName,
		"GAMELIFT_SDK_FLEET_ID=" + a.cfg.FleetID,
	}
}

// secretVars are the agent's own credentials: game servers do not get
// them.
var secretVars = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "ANYLIFT_ACCESS_KEY", "ANYLIFT_SECRET_KEY"}

// childEnv is the agent's environment without its credentials.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretVars, name) {
			out = append(out, kv)
		}
	}
	return out
}

// delay schedules the slot's next launch after its backoff.
func (a *Agent) delay(s *slot, now time.Time) {
	d := s.backoff.next()
	s.nextStart = now.Add(d)
	a.log.Info("next launch delayed", "launch_path", s.spec.LaunchPath, "delay", d.String())
	a.emit(Event{Kind: EvBackoff, Delay: d, Detail: s.spec.LaunchPath})
}

// exited handles a process's end: it is reported, and the report's
// answer says whether the slot's next process starts at once (settle).
// Until then the slot waits as after a crash, with its backoff (started
// again from BackoffMin when the process had run StableAfter): so a
// service that cannot be reached gets no tight loop of launches. A
// removed slot is dropped instead.
func (a *Agent) exited(ctx context.Context, ex exit) {
	p, s, now := ex.p, ex.p.slot, a.cfg.Now()
	s.proc = nil
	a.running--
	rep := api.AgentReport{Kind: "EXITED", ProcessId: p.pid, ExitCode: ex.state.ExitCode(), Stopped: p.stopping}
	if ws, ok := ex.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		rep.Signal = ws.Signal().String()
	}
	if p.killed {
		rep.Stopped = "KILLED"
	}
	if old := a.reports.add(rep); old != nil {
		a.log.Warn("too many reports queued; dropping the oldest", "kind", old.Kind, "pid", old.ProcessId)
		delete(a.ends, old.ProcessId) // its answer will never come
	}
	a.log.Info("server process exited", "pid", p.pid, "code", rep.ExitCode, "signal", rep.Signal, "stopped", rep.Stopped, "ran", now.Sub(p.started).String())
	a.emit(Event{Kind: EvExited, PID: p.pid, Detail: ex.state.String()})
	if s.removed {
		if a.slots[s.key] == s { // not replaced by a new slot of the same key
			delete(a.slots, s.key)
		}
		return
	}
	if now.Sub(p.started) >= a.cfg.StableAfter {
		s.backoff.reset()
	}
	d := s.backoff.next()
	s.nextStart = now.Add(d)
	a.ends[p.pid] = &ending{p: p, how: ex.state.String(), delay: d}
}

// ending is an exit whose report the service has not answered yet.
type ending struct {
	p     *proc
	how   string        // the exit status, as the OS words it
	delay time.Duration // the slot's delay if it crashed
	told  bool          // the delay was already announced (the service was unreachable)
}

// cleanEnd reports whether a process ended as GameLift expects a game
// server to: after hosting a game session, or after ProcessReady and
// ProcessEnding. Anything else (an exit before ProcessReady, or without
// ProcessEnding and without a game session) is a crash.
func cleanEnd(r *api.AgentReportResult) bool {
	return r.HostedGameSession || r.ProcessReady && r.ProcessEnding
}

// settle applies the service's answer about an exited process (nil: the
// service refused the report): after a clean end its slot starts a new
// process at once and its backoff starts again; after a crash the slot
// keeps its delay, which is announced with the process's last output.
func (a *Agent) settle(pid string, r *api.AgentReportResult, now time.Time) {
	e, ok := a.ends[pid]
	if !ok {
		return
	}
	delete(a.ends, pid)
	s := e.p.slot
	if r != nil && cleanEnd(r) {
		s.backoff.reset()
		if s.proc != nil || s.removed || a.slots[s.key] != s {
			return
		}
		s.nextStart = now
		why := "it hosted a game session"
		if !r.HostedGameSession {
			why = "it called ProcessEnding"
		}
		a.log.Info("server process ended; replacing it at once", "pid", pid, "why", why)
		a.emit(Event{Kind: EvReplacing, PID: pid, Detail: why})
		return
	}
	if e.told {
		return
	}
	code := ""
	if r != nil {
		code = r.EventCode
	}
	a.crashed(e, code)
}

// unanswered announces the delays of the exits the service could not be
// asked about; a later answer may still start their slots at once.
func (a *Agent) unanswered() {
	for _, e := range a.ends {
		if !e.told {
			e.told = true
			a.crashed(e, "")
		}
	}
}

// crashed logs a crashed process with its last lines of output, where
// the operator looks (the agent's log, anylift dev's terminal), and
// announces its slot's delay.
func (a *Agent) crashed(e *ending, code string) {
	s := e.p.slot
	args := []any{"pid", e.p.pid, "launch_path", s.spec.LaunchPath, "exit", e.how, "delay", e.delay.String()}
	if code != "" {
		args = append(args, "event", code)
	}
	a.log.Warn("server process crashed; next launch delayed", args...)
	for _, stream := range []string{"stdout", "stderr"} {
		path := filepath.Join(a.cfg.LogDir, e.p.pid+"."+stream+".log")
		for _, line := range lastLines(path, outputLines, outputBytes) {
			// Game servers often print their command line or settings:
			// the auth token they were given stays out of the log.
			a.log.Warn("crashed server process output", "pid", e.p.pid, "stream", stream, "line", sdkwire.RedactToken(line, e.p.token))
		}
	}
	a.emit(Event{Kind: EvBackoff, PID: e.p.pid, Delay: e.delay, Detail: s.spec.LaunchPath})
}

// How much of a crashed process's output is logged: its last lines of
// each stream, read from at most the last outputBytes of its log file.
const (
	outputLines = 10
	outputBytes = 4 << 10
)

// lastLines returns up to n last non-empty lines of the file at path,
// read from its last limit bytes; none when it cannot be read.
func lastLines(path string, n int, limit int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := st.Size() - limit
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	k, _ := f.ReadAt(buf, off)
	lines := strings.Split(string(buf[:k]), "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first may be cut
	}
	var out []string
	for _, l := range lines {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// reportReadyTimeout is the report kind asking the service whether a
// process called ProcessReady (control.ReportReadyTimeout).
const reportReadyTimeout = "READY_TIMEOUT"

// checkReady asks the service about the processes that have run
// ReadyTimeout, whether they called ProcessReady (answered in readyAnswer).
func (a *Agent) checkReady(now time.Time) {
	for _, s := range a.slots {
		if p := s.proc; p != nil && p.stopping == "" && !p.readyAsked && !now.Before(p.started.Add(a.cfg.ReadyTimeout)) {
			p.readyAsked = true
			a.reports.add(api.AgentReport{Kind: reportReadyTimeout, ProcessId: p.pid})
		}
	}
}

// readyAnswer stops a process the service found not ready in time; it
// wrote the fleet event.
func (a *Agent) readyAnswer(pid string, r *api.AgentReportResult, now time.Time) {
	if r.EventCode != wire.EventCodeServerProcessProcessReadyTimeout && r.EventCode != wire.EventCodeServerProcessSdkInitializationTimeout {
		return
	}
	for _, s := range a.slots {
		if p := s.proc; p != nil && p.pid == pid {
			a.stop(p, now, "it did not call ProcessReady within "+a.cfg.ReadyTimeout.String()+" ("+r.EventCode+")")
		}
	}
}

// stop asks p to end (SIGTERM); it is killed if still there after
// StopTimeout.
func (a *Agent) stop(p *proc, now time.Time, why string) {
	if p.stopping != "" {
		return
	}
	p.stopping = "TERMINATED"
	p.killAt = now.Add(a.cfg.StopTimeout)
	a.log.Info("stopping server process", "pid", p.pid, "why", why)
	a.emit(Event{Kind: EvStopping, PID: p.pid, Detail: why})
	signalGroup(p.cmd, syscall.SIGTERM)
}

// killOverdue kills the processes that outlived their StopTimeout.
func (a *Agent) killOverdue(now time.Time) {
	for _, s := range a.slots {
		if p := s.proc; p != nil && p.stopping != "" && !p.killed && !now.Before(p.killAt) {
			p.killed = true
			a.log.Warn("server process did not stop in time; killing it", "pid", p.pid)
			signalGroup(p.cmd, syscall.SIGKILL)
		}
	}
}

// stopAll stops every process and waits until all have exited, killing
// those that outlive StopTimeout.
func (a *Agent) stopAll() {
	now := a.cfg.Now()
	for _, s := range a.slots {
		s.removed = true
		if s.proc != nil {
			a.stop(s.proc, now, "the agent is stopping")
		}
	}
	for a.running > 0 {
		var timer <-chan time.Time
		if t, ok := a.nextKill(); ok {
			timer = a.cfg.Wake(t)
		}
		select {
		case ex := <-a.exits:
			a.exited(context.Background(), ex)
		case <-timer:
			a.killOverdue(a.cfg.Now())
		}
	}
}

// nextKill is the earliest pending SIGKILL deadline.
func (a *Agent) nextKill() (time.Time, bool) {
	var next time.Time
	for _, s := range a.slots {
		if p := s.proc; p != nil && p.stopping != "" && !p.killed && (next.IsZero() || p.killAt.Before(next)) {
			next = p.killAt
		}
	}
	return next, !next.IsZero()
}
