package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/sdkwire"
)

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
	a.dropLocal(p)
	a.freePort(p)
	rep := api.AgentReport{Kind: "EXITED", ProcessId: p.pid, ExitCode: ex.code, Signal: ex.signal, Stopped: p.stopping}
	if p.killed {
		rep.Stopped = "KILLED"
	}
	if old := a.reports.add(rep); old != nil {
		a.log.Warn("too many reports queued; dropping the oldest", "kind", old.Kind, "pid", old.ProcessId)
		delete(a.ends, old.ProcessId) // its answer will never come
	}
	a.log.Info("server process exited", "pid", p.pid, "code", rep.ExitCode, "signal", rep.Signal, "stopped", rep.Stopped, "ran", now.Sub(p.started).String())
	a.emit(Event{Kind: EvExited, PID: p.pid, Detail: ex.how})
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
	a.ends[p.pid] = &ending{p: p, how: ex.how, delay: d}
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
			line = sdkwire.RedactToken(sdkwire.RedactToken(line, e.p.token), e.p.sdkToken)
			a.log.Warn("crashed server process output", "pid", e.p.pid, "stream", stream, "line", line)
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
