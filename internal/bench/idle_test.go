package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// IdleProcesses is how many idle processes BenchmarkIdleProcessMemory
// connects; idleWarmup connect first, before the baseline, so that
// one-time costs (prepared statements, pools, maps growing) are not
// counted per process.
const (
	IdleProcesses = 2000
	idleWarmup    = 200
)

// clientsEnv carries the fleet to the child OS process running clients.
const clientsEnv = "ANYLIFT_BENCH_IDLE_CLIENTS"

// BenchmarkIdleProcessMemory measures the server's memory per idle
// connected process: Go server SDK processes (ProcessReady done, then
// idle) run in a child OS process, so that the benchmark's own heap is
// the server's. Heap (live objects after GC) and goroutine stacks are
// measured before and after IdleProcesses connect, and divided by it.
// One measurement per run: use -benchtime 1x.
func BenchmarkIdleProcessMemory(b *testing.B) {
	for _, st := range procStores() {
		if st.sync != "" {
			continue // the store's sync mode does not change what a connection holds
		}
		b.Run(st.name, func(b *testing.B) {
			raiseFileLimit(b)
			srv := startProcServer(b, st.url, st.sync)
			f := newBenchFleet(b, srv.URL(), placementComputes)
			child := startClients(b, f)
			// The next backend measures with this server gone, not
			// while it tears down its connections.
			defer closeServer(srv)
			defer child.stop()
			child.connect(b, idleWarmup)
			before := measure()
			child.connect(b, IdleProcesses)
			after := measure()
			n := float64(IdleProcesses)
			heap := float64(after.heap-before.heap) / n
			stack := float64(after.stack-before.stack) / n
			b.ReportMetric(heap, "heap-B/proc")
			b.ReportMetric(stack, "stack-B/proc")
			b.ReportMetric(heap+stack, "B/proc")
			b.ReportMetric(float64(after.goroutines-before.goroutines)/n, "goroutines/proc")
		})
	}
}

// memory is the server's share of this OS process's memory at a moment.
type memory struct {
	heap, stack uint64 // live heap bytes after GC; goroutine stack bytes
	goroutines  int
}

// measure collects garbage twice (finalizers, then what they freed) and
// reads the live heap and the stacks in use.
func measure() memory {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memory{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}

// clients is the child OS process holding the processes' connections.
type clients struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startClients re-executes the test binary as TestIdleClients, given f.
func startClients(b *testing.B, f *benchFleet) *clients {
	cfg, err := json.Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClients$", "-test.v=false")
	cmd.Env = append(os.Environ(), clientsEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &clients{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

// connect asks the child for n more ready processes and waits for them.
func (c *clients) connect(b *testing.B, n int) {
	if _, err := fmt.Fprintln(c.in, n); err != nil {
		b.Fatal(err)
	}
	for c.out.Scan() {
		if c.out.Text() == "ready" {
			return
		}
	}
	b.Fatalf("client process: no answer (%v)", c.out.Err())
}

// stop ends the child: closing its input makes it exit.
func (c *clients) stop() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// TestIdleClients is the child side of BenchmarkIdleProcessMemory; it does
// nothing unless started by it. For each number read from stdin it
// connects that many more Go server SDK processes (Init, ProcessReady) and
// writes "ready"; at the end of its input it exits without closing them.
func TestIdleClients(t *testing.T) {
	cfg := os.Getenv(clientsEnv)
	if cfg == "" {
		t.Skip("the child process of BenchmarkIdleProcessMemory")
	}
	var f benchFleet
	if err := json.Unmarshal([]byte(cfg), &f); err != nil {
		t.Fatal(err)
	}
	raiseFileLimit(t)
	p := newPool(&f, "idle")
	in := bufio.NewScanner(os.Stdin)
	total := 0
	for in.Scan() {
		n, err := strconv.Atoi(in.Text())
		if err != nil {
			t.Fatal(err)
		}
		total += n
		p.fill(t, total, 32)
		fmt.Println("ready")
	}
	os.Exit(0)
}
