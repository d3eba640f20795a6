package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds the real anylift binary into a temp dir.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "anylift")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startPiped starts cmd without a config file from the environment, its
// stdout piped to the returned reader and its stderr kept; the caller
// waits for it.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.ReadCloser, *strings.Builder) {
	t.Helper()
	cmd.Env = append(os.Environ(), "ANYLIFT_CONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdout, stderr
}

func TestBinaryStopsCleanlyOnSignals(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := []string{"serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
				"--access-key", "AKIDBIN", "--secret-key", "secret"}
			jsonLogs := sig == syscall.SIGTERM // as a service manager would run it
			if jsonLogs {
				args = append(args, "--log-format", "json")
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			stdout, stderr := startPiped(t, cmd)
			r := bufio.NewReader(stdout)
			line, err := r.ReadString('\n')
			url, ok := strings.CutPrefix(strings.TrimSpace(line), "anylift listening on ")
			if err != nil || !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("first line %q (%v); stderr:\n%s", line, err, stderr.String())
			}
			go io.Copy(io.Discard, r)
			resp, err := http.Get(url + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
				t.Errorf("/healthz: %d %q", resp.StatusCode, body)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit after %v: %v (want 0); stderr:\n%s", sig, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "shutting down") {
				t.Errorf("no shutdown in the log:\n%s", stderr.String())
			}
			if jsonLogs {
				for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
					var rec map[string]any
					if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil || rec["level"] == nil {
						t.Errorf("--log-format json wrote %q", l)
					}
				}
			}
		})
	}
}
