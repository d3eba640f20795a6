// Package crashtest kills the real anylift binary with SIGKILL in the
// middle of a stream of writes and checks, after a restart on the same data
// directory, that every acknowledged write is there and the store is
// consistent.
package crashtest

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/anylift/anylift/internal/apitest"
)

// binary builds cmd/anylift once per test binary.
func binary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anylift")
	out, err := exec.Command("go", "build", "-o", path, "github.com/anylift/anylift/cmd/anylift").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return path
}

// start runs "anylift serve" on dataDir, with more flags when given (a
// --store), and returns the process and the API URL it printed.
func start(t *testing.T, bin, dataDir string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", dataDir,
		"--access-key", apitest.AccessKey, "--secret-key", apitest.SecretKey, "--log-level", "error"}, flags...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the listen line: %v", err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "anylift listening on "))
	if !strings.HasPrefix(url, "http://") {
		cmd.Process.Kill()
		t.Fatalf("unexpected first line %q", line)
	}
	return cmd, url
}

// ownedFlags start a node on the PostgreSQL schema owning its fleets, as
// a node with --node-listen does by default (grouped writes, claims and seats decided in memory), with an id that
// its restart keeps, so that the restarted node holds its leases at once.
func ownedFlags(schema string) []string {
	return []string{"--store", schema, "--node-listen", "127.0.0.1:0",
		"--node-secret", "crashtest-node-secret-0123456789", "--node-id", "crashtest-node"}
}

func TestKill9LosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := binary(t)
	dir := t.TempDir()
	cmd, url := start(t, bin, dir)
	env := &apitest.Env{URL: url}

	var (
		mu    sync.Mutex
		acked []string
		n     atomic.Int64
		wg    sync.WaitGroup
	)
	killAt := int64(150)
	killed := make(chan struct{})
	var once sync.Once
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				name := fmt.Sprintf("custom-w%d-%d", w, i)
				r, err := tryCreate(t, env, name)
				if err != nil || r != 200 {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if n.Add(1) == killAt {
					once.Do(func() {
						cmd.Process.Kill() // SIGKILL, mid-stream: other writers are in flight
						close(killed)
					})
				}
			}
		}(w)
	}
	wg.Wait()
	cmd.Wait()

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "anylift.db"))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after kill -9: %q %v", check, err)
	}
	db.Close()

	cmd2, url2 := start(t, bin, dir)
	defer func() { cmd2.Process.Signal(os.Interrupt); cmd2.Wait() }()
	env2 := &apitest.Env{URL: url2}
	seen := map[string]bool{}
	token := ""
	for {
		body := `{"Limit": 200}`
		if token != "" {
			body = `{"Limit": 200, "NextToken": "` + token + `"}`
		}
		r := env2.CallJSON(t, "ListLocations", body)
		m := r.JSON(t)
		for _, l := range m["Locations"].([]any) {
			seen[l.(map[string]any)["LocationName"].(string)] = true
		}
		next, _ := m["NextToken"].(string)
		if next == "" {
			break
		}
		token = next
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < int(killAt) {
		t.Fatalf("only %d writes acknowledged before the kill", len(acked))
	}
	for _, name := range acked {
		if !seen[name] {
			t.Errorf("acknowledged location %s is missing after kill -9", name)
		}
	}
}

// tryCreate is CreateLocation that reports a dead server as an error
// instead of failing the test.
func tryCreate(t *testing.T, env *apitest.Env, name string) (int, error) {
	req := env.NewJSONRequest(t, "CreateLocation", `{"LocationName": "`+name+`"}`)
	apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := httpClient.Do(req.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
