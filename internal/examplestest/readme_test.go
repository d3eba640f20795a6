// Package examplestest runs the README's examples as a reader would: the
// real anylift binary started with the README's own command lines, the
// README's shell blocks run by bash in a directory laid out like the
// clone, and what the README shows compared with what the binary prints.
// Only the ports differ (every listener is on 127.0.0.1:0).
package examplestest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/exectest"
)

var anyliftBinary, chatBinary, backendBinary string

func TestMain(m *testing.M) {
	os.Exit(exectest.Main(m, map[string]*string{
		"cmd/anylift": &anyliftBinary, "examples/chat": &chatBinary, "examples/sessionbackend": &backendBinary}))
}

// waitLimit bounds every wait for another process.
const waitLimit = 60 * time.Second

// The README's addresses, which the test's own ports stand in for.
const (
	readmeAPI     = "127.0.0.1:9870"
	readmeGateway = "127.0.0.1:9872"
)

// readme is the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// example returns the fenced block that follows "<!-- example: name -->".
func example(t *testing.T, doc, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- example: "+name+" -->\n")
	if !ok {
		t.Fatalf("README has no example %q", name)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("example %q is not followed by a sh block", name)
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("example %q: unterminated block", name)
	}
	return block
}

// transcript is one "$ command" of a pasted terminal block and the output
// shown under it.
type transcript struct{ cmd, out string }

// transcripts returns every "$ command" of every fenced block of doc.
func transcripts(doc string) []transcript {
	var all []transcript
	parts := strings.Split(doc, "```")
	for i := 1; i < len(parts); i += 2 {
		block := parts[i]
		if _, after, ok := strings.Cut(block, "\n"); ok {
			block = after // the info string
		}
		var cur *transcript
		for _, line := range strings.SplitAfter(block, "\n") {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				all = append(all, transcript{cmd: strings.TrimSpace(cmd)})
				cur = &all[len(all)-1]
			} else if cur != nil {
				cur.out += line
			}
		}
	}
	return all
}

// workDir is a directory laid out as the clone is where the README's
// commands run: examples/matchmaking/duel.json and ./chat (built as the
// Quickstart builds it).
func workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "examples", "matchmaking"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../../examples/matchmaking/duel.json", filepath.Join(dir, "examples", "matchmaking", "duel.json"), 0o644)
	copyFile(t, chatBinary, filepath.Join(dir, "chat"), 0o755)
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// shellEnv is the environment of a terminal where the anylift binary is on
// the PATH and dev's two export lines were pasted; nothing of the caller's
// AWS or Anylift settings leaks in.
func shellEnv(api string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "ANYLIFT_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+filepath.Dir(anyliftBinary)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_ACCESS_KEY_ID=anylift", "AWS_SECRET_ACCESS_KEY=anylift", "AWS_DEFAULT_REGION=us-west-2",
		"AWS_ENDPOINT_URL_GAMELIFT=http://"+api)
}

// devRun is a running "anylift dev".
type devRun struct {
	cmd      *exec.Cmd
	out, err *exectest.SyncBuffer
	exited   chan struct{}
	api, gw  string // host:port of the API and of the player gateway
}

var (
	endpointLine = regexp.MustCompile(`export AWS_ENDPOINT_URL_GAMELIFT=http://(\S+)`)
	gatewayLine  = regexp.MustCompile(`Player gateway for game clients: http://(\S+)`)
)

// startDev runs "anylift dev" with args (as the README writes them) in dir,
// every listener on a free port, and waits for its block.
func startDev(t *testing.T, dir string, args ...string) *devRun {
	t.Helper()
	ports := []string{"--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--player-listen", "127.0.0.1:0"}
	flags, game := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			flags, game = args[:i], args[i:]
		}
	}
	full := append(append(append([]string{"dev"}, flags...), ports...), game...)
	d := &devRun{cmd: exec.Command(anyliftBinary, full...), out: &exectest.SyncBuffer{}, err: &exectest.SyncBuffer{}, exited: make(chan struct{})}
	d.cmd.Dir, d.cmd.Env = dir, shellEnv("")
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.err
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("anylift %s\nstdout:\n%s\nstderr:\n%s", strings.Join(full, " "), d.out.String(), d.err.String())
		}
	})
	exectest.Eventually(t, "dev's block", waitLimit, func() (bool, string) {
		select {
		case <-d.exited:
			t.Fatalf("anylift dev exited:\n%s%s", d.out.String(), d.err.String())
		default:
		}
		return strings.Contains(d.out.String(), "Press Ctrl-C to stop."), d.out.String()
	})
	d.api = endpointLine.FindStringSubmatch(d.out.String())[1]
	if m := gatewayLine.FindStringSubmatch(d.out.String()); m != nil {
		d.gw = m[1]
	}
	return d
}

// stop sends SIGINT (Ctrl-C) and waits for dev to end.
func (d *devRun) stop(t *testing.T) {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-d.exited:
	case <-time.After(waitLimit):
		d.cmd.Process.Kill()
		<-d.exited
		t.Errorf("anylift dev did not stop on SIGINT")
	}
}

// bash runs a README block in dir against d, the README's addresses
// standing for d's, and returns its standard output.
func (d *devRun) bash(t *testing.T, dir, block string) string {
	t.Helper()
	script := strings.NewReplacer(readmeAPI, d.api, readmeGateway, d.gw).Replace(block)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, shellEnv(d.api)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\nscript:\n%s\nstdout:\n%s\nstderr:\n%s", err, script, out, stderr.String())
	}
	return string(out)
}

var (
	timeField = regexp.MustCompile(`time=\S+`)
	readyIn   = regexp.MustCompile(`ready in \S+ `)
	fleetID   = regexp.MustCompile(`fleet-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	authToken = regexp.MustCompile(`(-authtoken |AUTH_TOKEN=)\S+`)
)

// normalize blanks what differs between runs: times, ids and tokens.
func normalize(s string) string {
	s = timeField.ReplaceAllString(s, "time=T")
	s = readyIn.ReplaceAllString(s, "ready in X ")
	s = fleetID.ReplaceAllString(s, "fleet-ID")
	return authToken.ReplaceAllString(s, "${1}TOKEN")
}

// checkBanner compares what dev printed with the README's pasted block:
// the log lines with its standard error, the rest with its standard output.
func (d *devRun) checkBanner(t *testing.T, cmd, shown string) {
	t.Helper()
	var logs, block strings.Builder
	for _, line := range strings.SplitAfter(shown, "\n") {
		if strings.HasPrefix(line, "time=") {
			logs.WriteString(line)
		} else {
			block.WriteString(line)
		}
	}
	ports := strings.NewReplacer(d.api, readmeAPI, d.gw, readmeGateway)
	if got, want := normalize(ports.Replace(d.out.String())), normalize(block.String()); got != want {
		t.Errorf("$ %s: the README shows\n%s\nthe binary prints\n%s", cmd, want, got)
	}
	// Standard error is copied apart from standard output: wait for as
	// many log lines as the README shows, then compare those.
	n := strings.Count(logs.String(), "\n")
	var first string
	exectest.Eventually(t, "dev's log lines", waitLimit, func() (bool, string) {
		lines := strings.SplitAfter(d.err.String(), "\n")
		if len(lines) <= n {
			return false, d.err.String()
		}
		first = strings.Join(lines[:n], "")
		return true, ""
	})
	if got, want := normalize(first), normalize(logs.String()); got != want {
		t.Errorf("$ %s: the README shows the log lines\n%s\nthe binary logs\n%s", cmd, want, got)
	}
}

// TestReadme runs the README's "anylift dev" command lines and compares
// the blocks they print with the pasted ones, then runs the matchmaking,
// session backend and player gateway examples as written.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the anylift binary and example programs")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	doc := readme(t)
	dir := workDir(t)

	var devs []transcript
	for _, tr := range transcripts(doc) {
		if strings.HasPrefix(tr.cmd, "anylift dev") {
			devs = append(devs, tr)
		}
	}
	if len(devs) != 2 || devs[0].cmd != "anylift dev" || !strings.Contains(devs[1].cmd, "--launch ./chat --count 2") {
		t.Fatalf("the Quickstart's dev command lines changed: %+v", devs)
	}

	// Quickstart step 2, then dev again with its game servers.
	plain := startDev(t, dir)
	plain.checkBanner(t, devs[0].cmd, devs[0].out)
	plain.stop(t)
	d := startDev(t, dir, strings.Fields(devs[1].cmd)[2:]...)
	d.checkBanner(t, devs[1].cmd, devs[1].out)

	t.Run("matchmaking", func(t *testing.T) { runMatchmaking(t, doc, dir, d) })
	t.Run("sessionbackend", func(t *testing.T) { runBackend(t, dir, d) })
	t.Run("gateway", func(t *testing.T) {
		waitFreeProcess(t, d, dir)
		out := d.bash(t, dir, example(t, doc, "gateway-dev"))
		if n := strings.Count(out, `"PlayerSessionId":"psess-`); n != 2 {
			t.Fatalf("want alice's and bob's seats, got:\n%s", out)
		}
		if !strings.Contains(out, `"GameSessions":[{`) || !strings.Contains(out, `"CurrentPlayerSessionCount":1`) {
			t.Fatalf("bob's search did not find alice's session:\n%s", out)
		}
	})
	d.stop(t)

	t.Run("gateway-token", func(t *testing.T) {
		const words = "anylift dev --player-jwt-hs256-secret-file player-secret"
		if !strings.Contains(doc, words) {
			t.Fatalf("the README no longer says %q", words)
		}
		d.bash(t, dir, example(t, doc, "gateway-secret"))
		tok := startDev(t, dir, append(strings.Fields(words)[2:], "--launch", "./chat", "--count", "1", "--", "-port", "0")...)
		waitFreeProcess(t, tok, dir)
		req, _ := http.NewRequest("POST", "http://"+tok.gw+"/v1/sessions/search", strings.NewReader(`{"FleetId":"x"}`))
		req.Header.Set("X-Anylift-Player-Id", "mallory")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("with a secret, dev's gateway still took the dev-mode header: %d", resp.StatusCode)
		}
		out := tok.bash(t, dir, example(t, doc, "gateway-token"))
		if !strings.Contains(out, `"PlayerSessionId":"psess-`) {
			t.Fatalf("the token was not accepted:\n%s", out)
		}
	})
}

// waitFreeProcess waits until dev's fleet has a server process without a
// game session.
func waitFreeProcess(t *testing.T, d *devRun, dir string) {
	t.Helper()
	waitUtilization(t, d, dir, "a free game server", func(processes, sessions int) bool { return processes > sessions })
}

// waitUtilization polls the dev fleet's utilization until ok holds for its
// active server processes and game sessions.
func waitUtilization(t *testing.T, d *devRun, dir, what string, ok func(processes, sessions int) bool) {
	t.Helper()
	exectest.Eventually(t, what, waitLimit, func() (bool, string) {
		out := d.bash(t, dir, "anylift describe-fleet-utilization --fleet-ids $(cat anylift-data/dev-fleet-id)")
		var u struct {
			FleetUtilization []struct{ ActiveServerProcessCount, ActiveGameSessionCount int }
		}
		if err := json.Unmarshal([]byte(out), &u); err != nil || len(u.FleetUtilization) != 1 {
			return false, out
		}
		f := u.FleetUtilization[0]
		return ok(f.ActiveServerProcessCount, f.ActiveGameSessionCount), out
	})
}

// runMatchmaking runs the README's duel, waits for the MatchmakingSucceeded
// event, and has both players present their sessions to the game server.
func runMatchmaking(t *testing.T, doc, dir string, d *devRun) {
	events := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+d.api+"/events?after=0&type=MatchmakingSucceeded", nil)
	req.SetBasicAuth("anylift", "anylift")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %s", resp.Status)
	}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				events <- data
			}
		}
		close(events)
	}()

	d.bash(t, dir, example(t, doc, "matchmaking"))
	select {
	case _, ok := <-events:
		if !ok {
			t.Fatal("the event stream ended")
		}
	case <-time.After(waitLimit):
		t.Fatal("no MatchmakingSucceeded event")
	}

	out := d.bash(t, dir, example(t, doc, "matchmaking-result"))
	var result struct {
		TicketList []struct {
			TicketID                  string `json:"TicketId"`
			Status                    string
			GameSessionConnectionInfo struct {
				IPAddress             string `json:"IpAddress"`
				Port                  int
				MatchedPlayerSessions []struct{ PlayerID, PlayerSessionID string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &result); err != nil || len(result.TicketList) != 2 {
		t.Fatalf("describe-matchmaking: %v\n%s", err, out)
	}
	var conns []net.Conn
	for _, tk := range result.TicketList {
		info := tk.GameSessionConnectionInfo
		if tk.Status != "COMPLETED" || len(info.MatchedPlayerSessions) != 1 {
			t.Fatalf("ticket %s: %s\n%s", tk.TicketID, tk.Status, out)
		}
		conns = append(conns, join(t, net.JoinHostPort(info.IPAddress, fmt.Sprint(info.Port)), info.MatchedPlayerSessions[0].PlayerSessionID))
	}
	if a, b := result.TicketList[0].GameSessionConnectionInfo, result.TicketList[1].GameSessionConnectionInfo; a.IPAddress != b.IPAddress || a.Port != b.Port {
		t.Fatalf("the two players were not placed together:\n%s", out)
	}
	for _, c := range conns {
		c.Close()
	}
}

// join connects to the chat server as the player session, as Quickstart
// step 5 does, and expects OK.
func join(t *testing.T, addr, playerSessionID string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(waitLimit))
	fmt.Fprintf(c, "%s\n", playerSessionID)
	line, err := bufio.NewReader(c).ReadString('\n')
	if strings.TrimSpace(line) != "OK" {
		c.Close()
		t.Fatalf("%s at %s: %q %v", playerSessionID, addr, line, err)
	}
	c.SetDeadline(time.Time{})
	return c
}

// runBackend runs examples/sessionbackend as examples/README.md says and
// asks it for two seats: both in one new game session on the fleet.
func runBackend(t *testing.T, dir string, d *devRun) {
	// The duel's game session ends once its players have left (the chat
	// server's passive destroy): until then the backend could seat one
	// player in it, as it ends, and the next in a new one.
	waitUtilization(t, d, dir, "the matchmaking test's game session to end", func(_, sessions int) bool { return sessions == 0 })
	fleet, err := os.ReadFile(filepath.Join(dir, "anylift-data", "dev-fleet-id"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(backendBinary, "-listen", "127.0.0.1:0", "-fleet-id", strings.TrimSpace(string(fleet)))
	cmd.Dir, cmd.Env = dir, shellEnv(d.api)
	p := exectest.Start(t, "sessionbackend", cmd)
	var base string
	exectest.Eventually(t, "the backend's address", waitLimit, func() (bool, string) {
		_, rest, ok := strings.Cut(p.Out.String(), "session backend on ")
		base, _, _ = strings.Cut(rest, "\n")
		return ok && strings.Contains(rest, "\n"), p.Out.String()
	})
	type seat struct {
		GameSessionID, PlayerSessionID, IPAddress string
		Port                                      int
	}
	ask := func(body string) (int, seat, string) {
		resp, err := http.Post(base+"/session", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var s struct {
			GameSessionId, PlayerSessionId, IpAddress string
			Port                                      int
		}
		json.Unmarshal(raw, &s)
		return resp.StatusCode, seat{s.GameSessionId, s.PlayerSessionId, s.IpAddress, s.Port}, string(raw)
	}
	if code, _, raw := ask(`{}`); code != http.StatusBadRequest {
		t.Fatalf("a request without PlayerId: %d %s", code, raw)
	}
	code, carol, raw := ask(`{"PlayerId":"carol"}`)
	if code != http.StatusOK || !strings.HasPrefix(carol.PlayerSessionID, "psess-") || carol.Port == 0 {
		t.Fatalf("carol: %d %s", code, raw)
	}
	code, dave, raw := ask(`{"PlayerId":"dave"}`)
	if code != http.StatusOK || dave.GameSessionID != carol.GameSessionID || dave.PlayerSessionID == carol.PlayerSessionID {
		t.Fatalf("dave was not seated beside carol: %d %s (carol: %+v)", code, raw, carol)
	}
	c := join(t, net.JoinHostPort(carol.IPAddress, fmt.Sprint(carol.Port)), carol.PlayerSessionID)
	c.Close()
}
