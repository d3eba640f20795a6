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

// proc is one running server process: an OS process, or a wrapped
// game binary behind the SDK connection the agent holds (wrap).
type proc struct {
	pid      string
	slot     *slot
	cmd      *exec.Cmd // nil when wrapped
	wrap     *wrapped  // nil unless wrapped
	token    string    // the auth token it was given, kept out of logged output
	sdkToken string    // its local SDK token ("" without the local SDK), kept out of logged output
	port     int       // the game port handed to a wrapped process (0: none)
	started  time.Time
	stopping string    // "" or processes.StoppedTerminated once SIGTERM was sent
	killAt   time.Time // when SIGKILL follows the SIGTERM
	killed   bool
	// readyAsked: the service was asked, ReadyTimeout after the launch,
	// whether the process called ProcessReady.
	readyAsked bool
}

// signal sends sig to the process (its group), or to the wrapped
// binary, or asks a wrapped process that runs no binary to end.
func (p *proc) signal(sig syscall.Signal) {
	if p.wrap != nil {
		p.wrap.signal(sig)
		return
	}
	signalGroup(p.cmd, sig)
}

// osPID is the operating system's process id (0: a wrapped process whose
// binary has not started).
func (p *proc) osPID() int {
	if p.cmd != nil && p.cmd.Process != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// exit is a process's end, sent by its waiter goroutine.
type exit struct {
	p      *proc
	code   int    // -1 when a signal ended it
	signal string // the signal that ended it, if any
	how    string // as the OS words it: "exit status 3", "signal: killed"
}

// exitOf is the end of p, whose OS process ended with state.
func exitOf(p *proc, state *os.ProcessState) exit {
	ex := exit{p: p, code: state.ExitCode(), how: state.String()}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ex.signal = ws.Signal().String()
	}
	return ex
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
	switch {
	case err == nil && a.cfg.Wrap != nil:
		p, err = a.startWrapped(s, path, args, now)
	case err == nil:
		p, err = a.start(s, path, args, now)
	}
	if err != nil {
		a.log.Error("cannot launch server process", "launch_path", s.spec.LaunchPath, "err", err)
		a.emit(Event{Kind: EvLaunchFailed, Detail: err.Error()})
		if !errors.As(err, new(setupError)) {
			a.reports.add(api.AgentReport{Kind: "INVALID_PATH", LaunchPath: s.spec.LaunchPath})
		}
		a.delay(s, now)
		return
	}
	s.proc = p
	a.running++
	a.log.Info("server process launched", "pid", p.pid, "os_pid", p.osPID(), "launch_path", s.spec.LaunchPath, "wrapped", p.wrap != nil)
	a.emit(Event{Kind: EvLaunched, PID: p.pid, Detail: s.spec.LaunchPath, OSPID: p.osPID()})
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
	p := &proc{pid: pid, slot: s, cmd: cmd, started: now, token: a.token}
	cmd.Env = append(append(childEnv(os.Environ()), a.sdkEnv(pid)...), a.localEnv(p, nil)...)
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		a.dropLocal(p)
		return nil, err
	}
	go func() { // ends when the process has exited; the loop drains a.exits until none run
		cmd.Wait()
		stdout.Close()
		stderr.Close()
		a.exits <- exitOf(p, cmd.ProcessState)
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

// reportReadyTimeout is the report kind asking the service whether a
// process called ProcessReady (processes.ReportReadyTimeout).
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
	p.signal(syscall.SIGTERM)
}

// killOverdue kills the processes that outlived their StopTimeout.
func (a *Agent) killOverdue(now time.Time) {
	for _, s := range a.slots {
		if p := s.proc; p != nil && p.stopping != "" && !p.killed && !now.Before(p.killAt) {
			p.killed = true
			a.log.Warn("server process did not stop in time; killing it", "pid", p.pid)
			p.signal(syscall.SIGKILL)
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
		case n := <-a.notes:
			a.noted(n)
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
