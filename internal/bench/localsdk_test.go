package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/localsdk"
	gl "github.com/anylift/anylift/sdk/server"
)

// The local SDK benchmarks: the agent's server SDK over loopback HTTP
// (internal/localsdk) in front of processes whose SDK connections are
// ready on the real server, 16 concurrent callers with keep-alive, each
// call carrying one of the processes' bearer tokens. The ceiling is a
// trivial handler answering {} to the same requests.
//
//	go test ./internal/bench -run '^$' -bench 'LocalSDK' -benchtime 20000x
//	go test ./internal/bench -run '^$' -bench 'LocalSDKMemory' -benchtime 1x

// localSDK is a local SDK server with processes ready on a real server.
type localSDK struct {
	server *localsdk.Server
	tokens []string
	// gameSession is ACTIVE with four player sessions on the process of
	// sessionToken, once withSession made it.
	gameSession, sessionToken string
}

// localCaller calls the local SDK over keep-alive connections.
type localCaller struct{ http *http.Client }

func newLocalCaller() *localCaller {
	return &localCaller{http: &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}}
}

// call sends one request and decodes a 200's body into out (when set).
func (c *localCaller) call(base, token, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// startLocalSDK starts a server, a fleet with one compute, and a local SDK
// server holding n processes' connections, each readied over HTTP.
func startLocalSDK(b *testing.B, n int) *localSDK {
	srv := startProcServer(b, "", "")
	f := newBenchFleet(b, srv.URL(), 1)
	s, err := localsdk.Listen("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { s.Close() })
	l := &localSDK{server: s}
	opts := gl.Options{Logger: slog.New(slog.DiscardHandler)}
	c := newLocalCaller()
	for i := range n {
		pid := fmt.Sprintf("proc-local-%d-%d", pidSeq.Add(1), i)
		params := func() gl.ServerParameters {
			return gl.ServerParameters{WebSocketURL: f.wsURL(), ProcessID: pid, HostID: f.Computes[0].Name,
				FleetID: f.FleetID, AuthToken: f.Computes[0].Token}
		}
		tok := s.Add(localsdk.NewConn(pid, params, opts))
		if err := c.call(s.URL(), tok, "POST", "/v1/ready", localsdk.ReadyRequest{Port: 7000 + i}, nil); err != nil {
			b.Fatal(err)
		}
		l.tokens = append(l.tokens, tok)
	}
	l.withSession(b, f)
	return l
}

// withSession places a game session on one of the processes, which
// activates it, and reserves four seats in it.
func (l *localSDK) withSession(b *testing.B, f *benchFleet) {
	api := newClient(f.URL)
	var gs struct {
		GameSession struct{ GameSessionId string }
	}
	if err := api.do("CreateGameSession", fmt.Appendf(nil, `{"FleetId": %q, "MaximumPlayerSessionCount": 8}`, f.FleetID), &gs); err != nil {
		b.Fatal(err)
	}
	l.gameSession = gs.GameSession.GameSessionId
	c := newLocalCaller()
	deadline := time.Now().Add(time.Minute)
	for l.sessionToken == "" {
		for _, tok := range l.tokens {
			var st localsdk.State
			if err := c.call(l.server.URL(), tok, "GET", "/v1/process", nil, &st); err != nil {
				b.Fatal(err)
			}
			if st.GameSessionId == l.gameSession {
				l.sessionToken = tok
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("no process received the game session")
		}
		time.Sleep(time.Millisecond) // the push travels through the real server
	}
	if err := c.call(l.server.URL(), l.sessionToken, "POST", "/v1/activate", nil, nil); err != nil {
		b.Fatal(err)
	}
	for i := range 4 {
		if err := api.do("CreatePlayerSession", fmt.Appendf(nil, `{"GameSessionId": %q, "PlayerId": "player-%d"}`, l.gameSession, i), nil); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	localOnce sync.Once
	localEnv  *localSDK
)

// BenchmarkLocalSDK: a process's health report (answered by the agent
// alone), its state, and DescribePlayerSessions (a round trip to the
// real service over the process's WebSocket), through the local SDK of
// one agent serving 10 processes, beside the trivial handler's ceiling.
func BenchmarkLocalSDK(b *testing.B) {
	localOnce.Do(func() { localEnv = startLocalSDK(b, 10) })
	l := localEnv
	c := newLocalCaller()
	token := func(r *rand.Rand) string { return l.tokens[r.IntN(len(l.tokens))] }
	b.Run("ceiling", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{}\n"))
		})}
		go srv.Serve(ln)
		defer srv.Close()
		base := "http://" + ln.Addr().String()
		run(b, func(r *rand.Rand) error {
			return c.call(base, token(r), "POST", "/v1/health", localsdk.HealthRequest{Healthy: true}, nil)
		})
	})
	b.Run("health", func(b *testing.B) {
		run(b, func(r *rand.Rand) error {
			return c.call(l.server.URL(), token(r), "POST", "/v1/health", localsdk.HealthRequest{Healthy: true}, nil)
		})
	})
	b.Run("process", func(b *testing.B) {
		run(b, func(r *rand.Rand) error {
			var st localsdk.State
			return c.call(l.server.URL(), token(r), "GET", "/v1/process", nil, &st)
		})
	})
	b.Run("describe-player-sessions", func(b *testing.B) {
		in := localsdk.DescribePlayerSessionsRequest{GameSessionId: l.gameSession}
		run(b, func(*rand.Rand) error {
			var out localsdk.DescribePlayerSessionsResult
			if err := c.call(l.server.URL(), l.sessionToken, "POST", "/v1/player-sessions/describe", in, &out); err != nil {
				return err
			}
			if len(out.PlayerSessions) != 4 {
				return fmt.Errorf("%d player sessions", len(out.PlayerSessions))
			}
			return nil
		})
	})
}

// BenchmarkLocalSDKMemory: the memory and goroutines one process costs
// the agent once it is ready through the local SDK: live heap and
// goroutine stacks after 500 processes readied, over 500. The service
// runs in the same process, so its side of each connection is counted
// too: an upper bound of the agent's share.
func BenchmarkLocalSDKMemory(b *testing.B) {
	const n = 500
	for range b.N {
		srv := startProcServer(b, "", "")
		f := newBenchFleet(b, srv.URL(), 1)
		s, err := localsdk.Listen("127.0.0.1:0", nil)
		if err != nil {
			b.Fatal(err)
		}
		c := newLocalCaller()
		opts := gl.Options{Logger: slog.New(slog.DiscardHandler)}
		memBefore, gBefore := liveMemory()
		for i := range n {
			pid := fmt.Sprintf("proc-mem-%d-%d", pidSeq.Add(1), i)
			params := func() gl.ServerParameters {
				return gl.ServerParameters{WebSocketURL: f.wsURL(), ProcessID: pid, HostID: f.Computes[0].Name,
					FleetID: f.FleetID, AuthToken: f.Computes[0].Token}
			}
			tok := s.Add(localsdk.NewConn(pid, params, opts))
			if err := c.call(s.URL(), tok, "POST", "/v1/ready", localsdk.ReadyRequest{Port: 7000 + i%50000}, nil); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(time.Second) // the first heartbeats, sent at once after ready, settle
		memAfter, gAfter := liveMemory()
		b.ReportMetric(float64(memAfter-memBefore)/n, "bytes/process")
		b.ReportMetric(float64(gAfter-gBefore)/n, "goroutines/process")
		s.Close()
		closeServer(srv)
	}
}

// liveMemory is the live heap plus goroutine stacks after a collection,
// and the number of goroutines.
func liveMemory() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse, runtime.NumGoroutine()
}
