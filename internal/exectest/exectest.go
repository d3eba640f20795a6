// Package exectest builds the module's example programs once per test
// binary and runs them as OS processes owned by a test: their output is
// kept, they are killed at cleanup, and the output is logged when the test
// failed. It also holds the polling and log-capturing helpers the
// process tests share.
package exectest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Main is the body of a TestMain: it builds each package of the module
// named by a key of bins (such as "examples/chat") into a temporary
// directory, stores the binary's path in the key's variable, runs the
// tests and removes the directory. It returns the exit code.
func Main(m *testing.M, bins map[string]*string) int {
	dir, err := os.MkdirTemp("", "anylift-exectest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for pkg, dst := range bins {
		*dst = filepath.Join(dir, path.Base(pkg))
		build := exec.Command("go", "build", "-o", *dst, "github.com/anylift/anylift/"+pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg+":", err)
			return 1
		}
	}
	return m.Run()
}

// Process is a program started by Start.
type Process struct {
	Cmd    *exec.Cmd
	Out    *SyncBuffer   // its standard output and error
	Exited chan struct{} // closed when it has exited; then Err is set
	Err    error         // what Cmd.Wait returned
	name   string
}

// Start starts cmd with its output collected in Out. At cleanup it kills
// the process if it still runs, waits for it, and logs its output under
// name when the test failed.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Out: &SyncBuffer{}, Exited: make(chan struct{}), name: name}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.Err = cmd.Wait()
		close(p.Exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.Exited:
		default:
			cmd.Process.Kill()
			<-p.Exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.Out.String())
		}
	})
	return p
}

// Wait waits up to limit for the process to exit, failing the test with
// its output if it does not, and returns what Cmd.Wait returned.
func (p *Process) Wait(t testing.TB, limit time.Duration) error {
	t.Helper()
	select {
	case <-p.Exited:
	case <-time.After(limit):
		t.Fatalf("%s did not exit; output:\n%s", p.name, p.Out.String())
	}
	return p.Err
}

// SyncBuffer collects a process's output; it is safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eventually polls cond every 10 ms until it reports true, failing the
// test with cond's last description once limit has passed: for state that
// other processes change.
func Eventually(t testing.TB, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, last)
		}
		<-tick.C
	}
}

// LogRecords is a slog handler that keeps every record as its message
// ("msg") and attributes, for tests that wait on the server's log.
type LogRecords struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (l *LogRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *LogRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *LogRecords) WithGroup(string) slog.Handler            { return l }

// Handle keeps r.
func (l *LogRecords) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, m)
	return nil
}

// Has reports whether a record has every key and value of want.
func (l *LogRecords) Has(want map[string]string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		match := true
		for k, v := range want {
			match = match && r[k] == v
		}
		if match {
			return true
		}
	}
	return false
}

// Contains reports whether a record's message or an attribute's key or
// value contains s (a test that nothing secret was logged).
func (l *LogRecords) Contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		for k, v := range r {
			if strings.Contains(k, s) || strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}
