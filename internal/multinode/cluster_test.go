package multinode

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
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/storetestenv"
)

const nodeSecret = "multinode-test-secret-0123456789"

// cluster is nginx in front of several anylift nodes on one schema.
type cluster struct {
	t     *testing.T
	bin   string
	dsn   string // with the test's search_path
	db    *sql.DB
	lbURL string // http://127.0.0.1:port of nginx
	nodes []*node
	extra []string // more flags for every node
}

type node struct {
	cmd      *exec.Cmd
	addr     string        // host:port of its API listener
	internal string        // http://host:port of its node listener
	done     chan struct{} // closed when it has exited, with err
	err      error
}

// needNginx returns nginx's path; the test is skipped without it unless
// CI=true.
func needNginx(t *testing.T) string {
	path, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/sbin/nginx"} {
			if _, e := os.Stat(p); e == nil {
				return p
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but nginx is not installed (apt-get install -y nginx-light)")
		}
		t.Skip("nginx is not installed")
	}
	return path
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := prepareCluster(t)
	c.start(n, c.bin)
	return c
}

// prepareCluster makes the cluster's schema and builds its binary; start
// runs the nodes and the balancer.
func prepareCluster(t *testing.T) *cluster {
	t.Helper()
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	needNginx(t)
	c := &cluster{t: t, dsn: storetestenv.FreshSchema(t, dsn)}
	db, err := sql.Open("pgx", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c.db = db
	c.bin = filepath.Join(t.TempDir(), "anylift")
	if out, err := exec.Command("go", "build", "-o", c.bin, "github.com/anylift/anylift/cmd/anylift").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c.lbURL = "http://" + freePort(t)
	return c
}

// start runs n nodes of bin and nginx in front of them.
func (c *cluster) start(n int, bin string) {
	c.t.Helper()
	lb := strings.TrimPrefix(c.lbURL, "http://")
	for range n {
		c.nodes = append(c.nodes, c.startNodeOf(bin, "127.0.0.1:0", "ws://"+lb))
	}
	c.startNginx(needNginx(c.t), lb)
}

// startNode runs "anylift serve" on the cluster's schema.
func (c *cluster) startNode(sdkEndpoint string) *node {
	c.t.Helper()
	return c.startNodeOf(c.bin, "127.0.0.1:0", sdkEndpoint)
}

// startNodeOf runs bin's "anylift serve" on the cluster's schema,
// listening on listen.
func (c *cluster) startNodeOf(bin, listen, sdkEndpoint string) *node {
	c.t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", listen, "--tls-listen", "", "--data-dir", c.t.TempDir(),
		"--store", c.dsn, "--sdk-endpoint", sdkEndpoint, "--node-listen", "127.0.0.1:0",
		"--access-key", apitest.AccessKey, "--secret-key", apitest.SecretKey, "--log-level", logLevel(),
		"--node-ttl", "3s", "--drain-timeout", "8s")
	cmd.Args = append(cmd.Args, c.extra...)
	cmd.Env = append(os.Environ(), "ANYLIFT_NODE_SECRET="+nodeSecret)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "anylift listening on http://") {
		cmd.Process.Kill()
		c.t.Fatalf("first line %q: %v", line, err)
	}
	second, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(second, "node listener on ") {
		cmd.Process.Kill()
		c.t.Fatalf("second line %q: %v", second, err)
	}
	go io.Copy(io.Discard, r)
	nd := &node{cmd: cmd, addr: strings.TrimPrefix(strings.TrimSpace(line), "anylift listening on http://"), done: make(chan struct{}),
		internal: "http://" + strings.TrimPrefix(strings.TrimSpace(second), "node listener on ")}
	go func() { nd.err = cmd.Wait(); close(nd.done) }()
	c.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-nd.done
	})
	return nd
}

// nginxConf is the balancer's configuration: WebSocket upgrades passed
// through, long read timeouts (the SDKs are silent for up to 70 s), and
// a request that cannot reach a node retried on the next one.
func nginxConf(dir, listen string, upstreams []string) string {
	var b strings.Builder
	if os.Geteuid() == 0 {
		b.WriteString("user root root;\n")
	}
	fmt.Fprintf(&b, "worker_processes 1;\nerror_log %s/error.log warn;\nevents { worker_connections 1024; }\nhttp {\n", dir)
	fmt.Fprintf(&b, "  access_log off;\n  client_body_temp_path %[1]s/body;\n  proxy_temp_path %[1]s/proxy;\n"+
		"  fastcgi_temp_path %[1]s/fastcgi;\n  uwsgi_temp_path %[1]s/uwsgi;\n  scgi_temp_path %[1]s/scgi;\n", dir)
	b.WriteString("  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }\n  upstream anylift {\n")
	for _, u := range upstreams {
		fmt.Fprintf(&b, "    server %s max_fails=1 fail_timeout=2s;\n", u)
	}
	b.WriteString("    keepalive 32;\n  }\n")
	fmt.Fprintf(&b, `  server {
    listen %s;
    location / {
      proxy_pass http://anylift;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 300s;
      proxy_send_timeout 300s;
      proxy_connect_timeout 1s;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`, listen)
	return b.String()
}

func (c *cluster) startNginx(bin, listen string) {
	c.t.Helper()
	dir := c.t.TempDir()
	var ups []string
	for _, n := range c.nodes {
		ups = append(ups, n.addr)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, listen, ups)), 0o600); err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-g", "daemon off; pid "+dir+"/nginx.pid;")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	c.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		if b, _ := os.ReadFile(filepath.Join(dir, "error.log")); c.t.Failed() && len(b) > 0 {
			c.t.Logf("nginx error.log:\n%s", b)
		}
	})
	c.waitFor("nginx to answer /healthz", 10*time.Second, func() bool {
		resp, err := http.Get(c.lbURL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// waitFor polls cond until it holds; it fails the test after limit.
func (c *cluster) waitFor(what string, limit time.Duration, cond func() bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			c.t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// query runs a counting query on the cluster's schema.
func (c *cluster) count(q string, args ...any) int {
	c.t.Helper()
	var n int
	if err := c.db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// nodeIDs maps each node's API address to its id, from the store.
func (c *cluster) heldBy() map[string]int {
	rows, err := c.db.Query(`SELECT n.address, COUNT(*) FROM process_holders h JOIN nodes n ON n.id = h.node_id
		JOIN processes p ON p.fleet_id = h.fleet_id AND p.compute = h.compute AND p.pid = h.pid
		WHERE p.connected = 1 GROUP BY n.address`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var a string
		var n int
		rows.Scan(&a, &n)
		out[a] = n
	}
	return out
}

// logLevel is the nodes' log level: warn, or MULTINODE_LOG_LEVEL.
func logLevel() string {
	if l := os.Getenv("MULTINODE_LOG_LEVEL"); l != "" {
		return l
	}
	return "warn"
}
