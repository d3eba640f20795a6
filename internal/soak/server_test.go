package soak

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/anylift/anylift/internal/apitest"
)

// server is a running "anylift serve" child process.
type server struct {
	cmd     *exec.Cmd
	url     string // http://127.0.0.1:port of --listen
	pprof   string // http://127.0.0.1:port of the pprof listener
	dataDir string
	logPath string  // its stderr
	db      *sql.DB // the PostgreSQL schema, when on PostgreSQL
	done    chan struct{}
	err     error
}

// Timings given to the server, short so that every timer path runs many
// times in a run: lost processes, unhealthy processes and reservations
// that are never accepted.
const (
	processLostGrace   = 5 * time.Second
	unhealthyTimeout   = 15 * time.Second
	reservationTimeout = 10 * time.Second
)

// buildServer builds cmd/anylift with the pprof tag into dir.
func buildServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "anylift")
	out, err := exec.Command("go", "build", "-tags", "pprof", "-o", bin, "github.com/anylift/anylift/cmd/anylift").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs bin's "anylift serve" on a SQLite store in dir, or on
// the PostgreSQL schema dsn when not empty, and waits for its first line.
func startServer(t *testing.T, bin, dir, dsn string) *server {
	t.Helper()
	s := &server{dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "", "--data-dir", s.dataDir,
		"--access-key", apitest.AccessKey, "--secret-key", apitest.SecretKey, "--region", apitest.Region,
		"--log-level", "warn", "--process-lost-grace", processLostGrace.String(),
		"--unhealthy-timeout", unhealthyTimeout.String(), "--reservation-timeout", reservationTimeout.String()}
	if dsn != "" {
		args = append(args, "--store", dsn)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		s.db = db
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	pprofAddr := freeAddr(t)
	s.pprof = "http://" + pprofAddr
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(os.Environ(), "ANYLIFT_PPROF_LISTEN="+pprofAddr)
	s.cmd.Stderr = logf
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "anylift listening on http://") {
		s.cmd.Process.Kill()
		t.Fatalf("first line %q: %v (log in %s)", line, err, s.logPath)
	}
	go io.Copy(io.Discard, r)
	s.url = strings.TrimPrefix(strings.TrimSpace(line), "anylift listening on ")
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
	})
	return s
}

// stop sends SIGTERM and waits for the server to exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Errorf("the server did not exit within 30 s of SIGTERM")
		return
	}
	if s.err != nil {
		t.Errorf("the server exited: %v (log in %s)", s.err, s.logPath)
	}
}

// gauges are the server's own figures at one moment.
type gauges struct {
	RSS        int64 // VmRSS, bytes
	RSSAnon    int64 // RssAnon: the heap of Go and of SQLite
	RSSFile    int64 // RssFile + RssShmem: mapped files (the binary, SQLite's shared memory)
	GoSys      int64 // go_memstats_sys_bytes: everything the Go runtime took from the system
	Heap       int64 // go_memstats_heap_inuse_bytes
	Goroutines int64 // go_goroutines
	FDs        int64 // process_open_fds
	Procs      int64 // anylift_sdk_connected_processes
	StoreBytes int64 // the SQLite files, or the PostgreSQL schema's relations
}

// measure reads the server's RSS from /proc, its gauges from /metrics and
// the size of its store.
func (s *server) measure(ctx context.Context) (gauges, error) {
	var g gauges
	rss, err := procStatus(s.cmd.Process.Pid)
	if err != nil {
		return g, err
	}
	g.RSS, g.RSSAnon, g.RSSFile = rss["VmRSS"], rss["RssAnon"], rss["RssFile"]+rss["RssShmem"]
	m, err := s.metrics(ctx)
	if err != nil {
		return g, err
	}
	g.Heap, g.GoSys, g.Goroutines = int64(m["go_memstats_heap_inuse_bytes"]), int64(m["go_memstats_sys_bytes"]), int64(m["go_goroutines"])
	g.FDs, g.Procs = int64(m["process_open_fds"]), int64(m["anylift_sdk_connected_processes"])
	g.StoreBytes, err = s.storeBytes(ctx)
	return g, err
}

// procStatus reads the memory figures (kB) of /proc/pid/status, in bytes.
func procStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest) // "123456 kB"
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[name] = kb << 10
		}
	}
	if _, ok := out["VmRSS"]; !ok {
		return nil, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return out, nil
}

// metrics reads the unlabelled series of /metrics, on a connection of
// its own.
func (s *server) metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// storeBytes is the size of the store: the files of the data directory's
// SQLite database, or every relation of the PostgreSQL schema.
func (s *server) storeBytes(ctx context.Context) (int64, error) {
	if s.db != nil {
		var n int64
		err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
		return n, err
	}
	var n int64
	err := filepath.WalkDir(s.dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".db") {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

// profile saves the server's pprof profile name (goroutine, heap) into
// path; debug=1 gives text grouped by stack.
func (s *server) profile(ctx context.Context, name string, debug int, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/%s?debug=%d", s.pprof, name, debug), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: %s", name, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
