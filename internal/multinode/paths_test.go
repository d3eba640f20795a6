package multinode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/extapi"
	model "github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/sdk/playerwire"
	sdk "github.com/anylift/anylift/sdk/server"
)

// With fleet ownership, every way in reaches the node owning the fleet:
// the player gateway, agents' reports, the console's forms, Anylift's own
// operations and match backfill, each driven here through the node that
// does not own the fleet.

// playerSecret signs the players' tokens (HS256), the same on both nodes.
var playerSecret = []byte("multinode-player-gateway-secret-0123456789")

// withPaths runs a node with fleet ownership, the player gateway open to
// every fleet, alias and queue, and fault injection.
func withPaths(c *server.Config) {
	withOwnership(c)
	// None of these tests waits for a node to be found dead; a node TTL
	// longer than withOwnership's keeps a node starved of CPU for 3 s
	// (under -race, beside other packages' tests) from looking dead and
	// having its fleets, with their faults, taken over mid-test.
	c.NodeTTL = 10 * time.Second
	c.PlayerListen = "127.0.0.1:0"
	c.Player.Auth.HS256Secret = playerSecret
	c.Player.AllowedFleets = []string{"*"}
	c.Player.AllowedAliases = []string{"*"}
	c.Player.AllowedQueues = []string{"*"}
	c.Player.RatePerSecond = -1
	c.Player.RejoinGrace = time.Minute
	c.AllowFaultInjection = true
}

// apart starts two nodes with withPaths (and a with optsA) on one schema
// and creates fleets (in one location) until each node owns one: fa is
// a's, fb is b's.
func apart(t *testing.T, optsA ...apitest.Option) (a, b *relayNode, fa, fb string) {
	t.Helper()
	a, b = relayPairWith(t, append([]apitest.Option{withPaths}, optsA...), []apitest.Option{withPaths})
	gl := a.Client()
	if _, err := gl.CreateLocation(context.Background(), &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; fa == "" || fb == ""; i++ {
		if i == 16 {
			t.Fatal("16 fleets, all owned by one node")
		}
		f := apitest.CreateAnywhereFleet(t, gl, location, fmt.Sprintf("f%d", i))
		got := waitSettled(t, "two nodes", a.Env, a.Env, b.Env)
		switch got[f].NodeID {
		case a.Server.Service().NodeID():
			if fa == "" {
				fa = f
			}
		case b.Server.Service().NodeID():
			if fb == "" {
				fb = f
			}
		}
	}
	return a, b, fa, fb
}

// gameProc is a Go SDK server process that activates every session it is
// given, once activate lets it when it is set.
type gameProc struct {
	p         *sdk.Process
	started   chan sdk.GameSession
	updated   chan sdk.UpdateGameSession
	terminate chan struct{}
	activate  chan struct{}
}

// serve connects a process of fleet's compute through node entry (the
// connection is relayed to the owner) and makes it ready.
func serve(t *testing.T, entry *relayNode, fleet, compute, token, pid string) *gameProc {
	return serveHolding(t, entry, fleet, compute, token, pid, nil)
}

// serveHolding is serve for a process that activates each session only
// once activate yields (nil: at once).
func serveHolding(t *testing.T, entry *relayNode, fleet, compute, token, pid string, activate chan struct{}) *gameProc {
	t.Helper()
	p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: "ws://" + entry.Server.Addr(), ProcessID: pid, HostID: compute,
		FleetID: fleet, AuthToken: token},
		sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {}, HealthCheckInterval: time.Hour,
			ReconnectMin: 10 * time.Millisecond, DrainTimeout: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("%s connecting: %v", pid, err)
	}
	t.Cleanup(func() { p.Destroy() })
	g := &gameProc{p: p, started: make(chan sdk.GameSession, 8), updated: make(chan sdk.UpdateGameSession, 32), terminate: make(chan struct{}, 1),
		activate: activate}
	err = p.ProcessReady(sdk.ProcessParameters{Port: 9000,
		OnStartGameSession: func(gs sdk.GameSession) {
			g.started <- gs
			go func() {
				if g.activate != nil {
					<-g.activate
				}
				p.ActivateGameSession()
			}()
		},
		OnUpdateGameSession: func(u sdk.UpdateGameSession) { g.updated <- u },
		OnProcessTerminate:  func() { g.terminate <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, pid+" to take game sessions", func() bool {
		var proc *model.Process
		err := entry.Server.Store().View(context.Background(), func(tx store.Tx) error {
			var err error
			proc, err = tx.GetProcess(fleet, compute, pid)
			return err
		})
		return err == nil && proc.Status == model.ProcessActive && (proc.Healthy || proc.GameSessionID != "")
	})
	return g
}

// player is a game client of node n's player gateway.
type player struct {
	t     *testing.T
	id    string
	base  string
	token string
}

func playerOf(t *testing.T, n *relayNode, id string) *player {
	now := time.Now()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: id, IssuedAt: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(playerSecret)
	if err != nil {
		t.Fatal(err)
	}
	return &player{t: t, id: id, base: "http://" + n.Server.PlayerAddr(), token: tok}
}

// call posts in to path and decodes a 200 answer into out; it returns the
// status, and the error answer's code otherwise.
func (p *player) call(path string, in, out any) (int, string) {
	p.t.Helper()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, p.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var pe playerwire.Error
		json.Unmarshal(body, &pe)
		return resp.StatusCode, pe.Code + ": " + pe.Message
	}
	if err := json.Unmarshal(body, out); err != nil {
		p.t.Fatalf("%s: %v: %s", path, err, body)
	}
	return resp.StatusCode, ""
}

// must is call for a request that must succeed.
func (p *player) must(path string, in, out any) {
	p.t.Helper()
	if status, msg := p.call(path, in, out); status != http.StatusOK {
		p.t.Fatalf("%s as %s: %d %s", path, p.id, status, msg)
	}
}

// The player gateway of the node that does not own a fleet creates
// sessions on it (by fleet, by alias and through a queue), joins, leaves
// and rejoins them; the owner serves each, seat holds included.
func TestPlayerGatewayThroughANodeNotOwningTheFleet(t *testing.T) {
	a, b, fa, _ := apart(t)
	gl := b.Client()
	ctx := context.Background()
	token := apitest.RegisterCompute(t, gl, fa, location, "host-1", "10.0.0.1")
	for i := range 4 {
		serve(t, b, fa, "host-1", token, fmt.Sprintf("p-%d", i))
	}
	alias, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("to-a"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fa)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("players"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(fa)}}}); err != nil {
		t.Fatal(err)
	}

	alice, bob, carol := playerOf(t, b, "alice"), playerOf(t, b, "bob"), playerOf(t, b, "carol")
	var byFleet, byAlias, byQueue playerwire.Seat
	alice.must(playerwire.PathCreate, playerwire.CreateSessionRequest{FleetId: fa, MaximumPlayerSessionCount: 2, Name: "by-fleet"}, &byFleet)
	// (a creator may create one session a second on a fleet)
	playerOf(t, b, "erin").must(playerwire.PathCreate, playerwire.CreateSessionRequest{AliasId: aws.ToString(alias.Alias.AliasId),
		MaximumPlayerSessionCount: 2, Name: "by-alias"}, &byAlias)
	playerOf(t, b, "frank").must(playerwire.PathCreate, playerwire.CreateSessionRequest{QueueName: "players", MaximumPlayerSessionCount: 2,
		Name: "by-queue"}, &byQueue)
	for _, s := range []playerwire.Seat{byFleet, byAlias, byQueue} {
		if !strings.Contains(s.GameSessionId, fa) || s.PlayerSessionId == "" || s.IpAddress != "10.0.0.1" {
			t.Errorf("seat %+v", s)
		}
	}

	// Bob joins the session made by fleet id, and leaves it; his seat is
	// held for him, so Carol finds the session full, and Bob rejoins.
	var seat playerwire.Seat
	bob.must(playerwire.PathJoin, playerwire.JoinRequest{GameSessionId: byFleet.GameSessionId}, &seat)
	var left playerwire.LeaveResult
	bob.must(playerwire.PathLeave, playerwire.LeaveRequest{GameSessionId: byFleet.GameSessionId}, &left)
	if len(left.PlayerSessionIds) != 1 || left.PlayerSessionIds[0] != seat.PlayerSessionId {
		t.Errorf("leave answered %+v, want %s", left, seat.PlayerSessionId)
	}
	if status, msg := carol.call(playerwire.PathJoin, playerwire.JoinRequest{GameSessionId: byFleet.GameSessionId}, &seat); status != http.StatusConflict ||
		!strings.HasPrefix(msg, "GameSessionFull:") {
		t.Errorf("Carol joining a session whose free seat is held for Bob: %d %s", status, msg)
	}
	bob.must(playerwire.PathRejoin, playerwire.JoinRequest{GameSessionId: byFleet.GameSessionId}, &seat)

	// Searching through either node finds the three sessions.
	for _, n := range []*relayNode{a, b} {
		var found playerwire.SearchResult
		playerOf(t, n, "dave").must(playerwire.PathSearch, playerwire.SearchRequest{FleetId: fa}, &found)
		if len(found.GameSessions) != 3 {
			t.Errorf("search finds %d sessions, want 3", len(found.GameSessions))
		}
	}
	out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(byFleet.GameSessionId)})
	if err != nil || aws.ToInt32(out.GameSessions[0].CurrentPlayerSessionCount) != 2 {
		t.Errorf("the session made by fleet id: %v %v", out, err)
	}
	if b.logs.Contains("player gateway request failed") || a.logs.Contains("player gateway request failed") {
		t.Error("a node logged a failed player request")
	}
}

// A create relayed to the owner's gateway waits for its session longer
// than the owner's node listener lets a request read or write: the relay
// lifts both, as the gateway's own listener does for its creates.
func TestRelayedCreateOutlivesTheOwnersHTTPLimits(t *testing.T) {
	const short = time.Second
	a, b, fa, _ := apart(t, func(c *server.Config) {
		c.Limits = server.Limits{ReadHeaderTimeout: short, ReadTimeout: short, WriteTimeout: short}
	})
	token := apitest.RegisterCompute(t, b.Client(), fa, location, "host-1", "10.0.0.1")
	activate := make(chan struct{})
	g := serveHolding(t, b, fa, "host-1", token, "p-0", activate)
	type answer struct {
		status int
		msg    string
		seat   playerwire.Seat
	}
	done := make(chan answer, 1)
	go func() {
		var ans answer
		ans.status, ans.msg = playerOf(t, b, "alice").call(playerwire.PathCreate,
			playerwire.CreateSessionRequest{FleetId: fa, MaximumPlayerSessionCount: 2}, &ans.seat)
		done <- ans
	}()
	select {
	case <-g.started:
	case ans := <-done:
		t.Fatalf("the create answered before its session started: %d %s", ans.status, ans.msg)
	case <-time.After(20 * time.Second):
		t.Fatal("the session never reached its process")
	}
	// More than the owner's deadlines pass: a request stalled on its node
	// listener since now is cut.
	stalled, err := net.Dial("tcp", a.Server.NodeAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.Write([]byte("POST /node/v1/player HTTP/1.1\r\n"))
	stalled.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(stalled); err != nil {
		t.Fatalf("a stalled request was not cut: %v", err)
	}
	close(activate)
	select {
	case ans := <-done:
		if ans.status != http.StatusOK || ans.seat.PlayerSessionId == "" {
			t.Fatalf("the create: %d %s %+v", ans.status, ans.msg, ans.seat)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the create never answered")
	}
}

// An agent's report about a process of a fleet another node owns, sent
// to the node that does not own it, is answered by the owner, which ends
// the process.
func TestAgentReportThroughANodeNotOwningTheFleet(t *testing.T) {
	_, b, fa, _ := apart(t)
	gl := b.Client()
	token := apitest.RegisterCompute(t, gl, fa, location, "host-1", "10.0.0.1")
	serve(t, b, fa, "host-1", token, "p-0")
	body, _ := json.Marshal(api.AgentReport{FleetId: fa, ComputeName: "host-1", ProcessId: "p-0", Kind: "EXITED", ExitCode: 3})
	req, _ := http.NewRequest(http.MethodPost, b.URL+api.AgentReportPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
	r := b.Do(t, req)
	var res api.AgentReportResult
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || res.EventCode != "SERVER_PROCESS_CRASHED" || !res.ProcessReady {
		t.Fatalf("report through the node not owning the fleet: %d %s", r.Status, r.Body)
	}
	out, err := gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fa)})
	if err != nil {
		t.Fatal(err)
	}
	crashed := 0
	for _, e := range out.Events {
		if e.EventCode == types.EventCodeServerProcessCrashed {
			crashed++
		}
	}
	if crashed != 1 {
		t.Errorf("%d SERVER_PROCESS_CRASHED events, want 1", crashed)
	}
}

// console is a browser signed in to one node's console.
type console struct {
	t    *testing.T
	base string
	http *http.Client
}

func signIn(t *testing.T, n *relayNode) *console {
	jar, _ := cookiejar.New(nil)
	c := &console{t: t, base: n.URL, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if resp, _ := c.post("/console/signin", url.Values{"access_key_id": {apitest.AccessKey},
		"secret_access_key": {apitest.SecretKey}, "next": {"/console/fleets"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %s", resp.Status)
	}
	return c
}

func (c *console) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (c *console) get(path string) string {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	resp, body := c.do(req)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s: %s", path, resp.Status)
	}
	return body
}

// post submits a form from the console's own origin.
func (c *console) post(path string, form url.Values) (*http.Response, string) {
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	return c.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// form submits the form of page path that posts to action, with its CSRF
// token and fields, and expects the console's redirect to next.
func (c *console) form(path, action string, fields url.Values, next string) {
	c.t.Helper()
	m := csrfField.FindStringSubmatch(c.get(path))
	if m == nil {
		c.t.Fatalf("no form on %s", path)
	}
	fields.Set("csrf", m[1])
	resp, body := c.post(action, fields)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != next {
		c.t.Fatalf("POST %s: %s to %q: %.300s", action, resp.Status, resp.Header.Get("Location"), body[strings.Index(body, "<main"):])
	}
}

// The console of the node that does not own a fleet terminates its game
// sessions and deregisters its computes: the owner makes both.
func TestConsoleThroughANodeNotOwningTheFleet(t *testing.T) {
	_, b, fa, _ := apart(t)
	gl := b.Client()
	ctx := context.Background()
	token := apitest.RegisterCompute(t, gl, fa, location, "host-1", "10.0.0.1")
	g := serve(t, b, fa, "host-1", token, "p-0")
	var gs *gamelift.CreateGameSessionOutput
	waitUntil(t, "a free process", func() bool {
		var err error
		gs, err = gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fa), MaximumPlayerSessionCount: aws.Int32(2)})
		return err == nil
	})
	id := aws.ToString(gs.GameSession.GameSessionId)
	<-g.started
	c := signIn(t, b)
	c.form("/console/session?id="+url.QueryEscape(id), "/console/session/terminate", url.Values{"id": {id}},
		"/console/session?id="+url.QueryEscape(id))
	select {
	case <-g.terminate:
	case <-time.After(20 * time.Second):
		t.Fatal("the process was never told to terminate")
	}
	out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil || out.GameSessions[0].Status == types.GameSessionStatusActive {
		t.Fatalf("the terminated session: %v %v", out, err)
	}

	c.form("/console/fleets/"+fa+"/computes", "/console/fleets/"+fa+"/computes/deregister", url.Values{"compute": {"host-1"}},
		"/console/fleets/"+fa+"/computes")
	if _, err := gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fa), ComputeName: aws.String("host-1")}); err == nil {
		t.Fatal("the compute is still registered")
	}
}

// A fault injected through the node that does not own its fleet is in
// force on the owner, where it acts; ListFaults, DescribeStatus and
// ClearFaults without a fleet see and end the faults of every node, and a
// fleet that moves ends its faults.
func TestFaultsThroughANodeNotOwningTheFleet(t *testing.T) {
	a, b, fa, fb := apart(t)
	for _, f := range []string{fa, fb} {
		token := apitest.RegisterCompute(t, b.Client(), f, location, "host-1", "10.0.0.1")
		serve(t, b, f, "host-1", token, "p-0")
	}
	inject := func(through *relayNode, fleet string) string {
		out := apitest.Extension[extapi.InjectFaultOutput](t, through.Env, extapi.OpInjectFault,
			extapi.InjectFaultInput{Fault: extapi.Fault{Kind: "PLACEMENT_FAILURE", FleetId: fleet, Duration: "10m"}})
		return out.Fault.FaultId
	}
	onA, onB := inject(b, fa), inject(a, fb) // each through the node not owning the fleet
	for _, f := range []string{fa, fb} {
		_, err := b.Client().CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(f),
			MaximumPlayerSessionCount: aws.Int32(2)})
		if !strings.Contains(fmt.Sprint(err), "FleetCapacityExceeded") || !strings.Contains(fmt.Sprint(err), "injected by Anylift fault") {
			t.Errorf("CreateGameSession on %s with a PLACEMENT_FAILURE fault: %v (leases now: %+v; a: %s, b: %s)", f, err,
				leases(t, a.Env), a.Server.Service().NodeID(), b.Server.Service().NodeID())
		}
	}
	for _, n := range []*relayNode{a, b} {
		list := apitest.Extension[extapi.ListFaultsOutput](t, n.Env, extapi.OpListFaults, extapi.ListFaultsInput{})
		if len(list.Faults) != 2 || list.Faults[0].FaultId != onA || list.Faults[1].FaultId != onB {
			t.Errorf("ListFaults of every fleet: %+v, want %s then %s", list.Faults, onA, onB)
		}
		one := apitest.Extension[extapi.ListFaultsOutput](t, n.Env, extapi.OpListFaults, extapi.ListFaultsInput{FleetId: fb})
		if len(one.Faults) != 1 || one.Faults[0].FaultId != onB {
			t.Errorf("ListFaults of %s: %+v", fb, one.Faults)
		}
		st := apitest.Extension[extapi.DescribeStatusOutput](t, n.Env, extapi.OpDescribeStatus, extapi.DescribeStatusInput{})
		for _, f := range st.Fleets {
			want := map[string]string{fa: onA, fb: onB}[f.FleetId]
			if want != "" && (len(f.Faults) != 1 || f.Faults[0].FaultId != want) {
				t.Errorf("DescribeStatus: fleet %s has faults %+v, want %s", f.FleetId, f.Faults, want)
			}
		}
	}
	cleared := apitest.Extension[extapi.ClearFaultsOutput](t, a.Env, extapi.OpClearFaults, extapi.ClearFaultsInput{FaultId: onA})
	if len(cleared.Faults) != 1 || cleared.Faults[0].FaultId != onA {
		t.Errorf("ClearFaults of a fault on the other node: %+v", cleared.Faults)
	}
	if r := a.CallExtension(t, extapi.OpClearFaults, extapi.ClearFaultsInput{FaultId: onA}); r.Status != http.StatusBadRequest ||
		r.ErrorType(t) != "NotFoundException" {
		t.Errorf("clearing it again: %d %s", r.Status, r.Body)
	}
	waitUntil(t, "a session on the fleet whose fault was cleared", func() bool {
		_, err := b.Client().CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fa),
			MaximumPlayerSessionCount: aws.Int32(2)})
		return err == nil
	})

	// When b stops, its fleet moves to a, and b's faults end with it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Server.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if list := apitest.Extension[extapi.ListFaultsOutput](t, a.Env, extapi.OpListFaults, extapi.ListFaultsInput{}); len(list.Faults) != 0 {
		t.Errorf("faults after the fleets moved: %+v", list.Faults)
	}
	waitUntil(t, "the event saying the moved fleet's fault ended", func() bool {
		out, err := a.Client().DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fb)})
		if err != nil {
			return false
		}
		for _, e := range out.Events {
			if strings.Contains(aws.ToString(e.Message), onB) && strings.Contains(aws.ToString(e.Message), "moved to another node") {
				return true
			}
		}
		return false
	})
}

// arena: two teams of one or two players.
const arena = `{"name":"arena","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10}],
 "teams":[{"name":"red","maxPlayers":2,"minPlayers":1},{"name":"blue","maxPlayers":2,"minPlayers":1}]}`

// matchmakerData is the part of a session's MatchmakerData checked here.
type matchmakerData struct {
	MatchID string `json:"matchId"`
	Teams   []struct {
		Players []struct {
			PlayerID string `json:"playerId"`
		} `json:"players"`
	} `json:"teams"`
	AutoBackfillTicket *string `json:"autoBackfillTicketId"`
}

// A configuration's matchmaker runs on one node and its matches' session
// on a fleet the other node owns: automatic backfill tickets that time out
// are followed by the next one, and a new player fills the session, each
// made by the fleet's owner at the matchmaker's request.
func TestMatchBackfillIntoASessionOfAnotherNodesFleet(t *testing.T) {
	a, b, fa, fb := apart(t)
	ctx := context.Background()
	gl := a.Client()
	queues := map[string]string{}
	for name, fleet := range map[string]string{"qa": fa, "qb": fb} {
		q, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String(name),
			Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String(fleet)}}})
		if err != nil {
			t.Fatal(err)
		}
		queues[name] = aws.ToString(q.GameSessionQueue.GameSessionQueueArn)
	}
	if _, err := gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("arena"), RuleSetBody: aws.String(arena)}); err != nil {
		t.Fatal(err)
	}
	if _, err := gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("arena"),
		RuleSetName: aws.String("arena"), RequestTimeoutSeconds: aws.Int32(5), AcceptanceRequired: aws.Bool(false),
		GameSessionQueueArns: []string{queues["qa"]}, FlexMatchMode: types.FlexMatchModeWithQueue,
		BackfillMode: types.BackfillModeAutomatic}); err != nil {
		t.Fatal(err)
	}

	// Whichever node leads the configuration, its sessions go to the
	// other node's fleet.
	db, err := sql.Open("pgx", a.Config.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var holder string
	waitUntil(t, "a node to lead the configuration", func() bool {
		return db.QueryRow(`SELECT owner FROM matchmaking_leases WHERE config = 'arena'`).Scan(&holder) == nil
	})
	matchmaker, owner, fleet := a, b, fb
	if holder == b.Server.FlexMatch().MatchmakerID() {
		matchmaker, owner, fleet = b, a, fa
	} else if holder != a.Server.FlexMatch().MatchmakerID() {
		t.Fatalf("the configuration is led by %q, neither node", holder)
	}
	if fleet == fb {
		if _, err := gl.UpdateMatchmakingConfiguration(ctx, &gamelift.UpdateMatchmakingConfigurationInput{Name: aws.String("arena"),
			GameSessionQueueArns: []string{queues["qb"]}}); err != nil {
			t.Fatal(err)
		}
	}
	token := apitest.RegisterCompute(t, gl, fleet, location, "host-1", "10.0.0.1")
	g := serve(t, matchmaker, fleet, "host-1", token, "p-0")

	mm := matchmaker.Client()
	start := func(id, player string) {
		t.Helper()
		if _, err := mm.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{TicketId: aws.String(id), ConfigurationName: aws.String("arena"),
			Players: []types.Player{{PlayerId: aws.String(player), PlayerAttributes: map[string]types.AttributeValue{"skill": {N: aws.Float64(10)}},
				LatencyInMs: map[string]int32{location: 20}}}}); err != nil {
			t.Fatal(err)
		}
	}
	ticket := func(id string) types.MatchmakingTicket {
		t.Helper()
		out, err := mm.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: []string{id}})
		if err != nil || len(out.TicketList) != 1 {
			t.Fatalf("DescribeMatchmaking %s: %v %v", id, out, err)
		}
		return out.TicketList[0]
	}
	data := func(session string) matchmakerData {
		t.Helper()
		out, err := mm.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(session)})
		if err != nil || len(out.GameSessions) != 1 {
			t.Fatalf("DescribeGameSessions: %v %v", out, err)
		}
		var md matchmakerData
		if err := json.Unmarshal([]byte(aws.ToString(out.GameSessions[0].MatchmakerData)), &md); err != nil {
			t.Fatal(err)
		}
		return md
	}
	// update waits for the server to hear reason about ticket, past the
	// other updates it hears meanwhile.
	update := func(reason, ticket string) sdk.UpdateGameSession {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case u := <-g.updated:
				if u.UpdateReason == reason && (ticket == "" || u.BackfillTicketID == ticket) {
					return u
				}
			case <-deadline:
				t.Fatalf("the server never heard %s for %q", reason, ticket)
			}
		}
	}

	start("t1", "p1")
	start("t2", "p2")
	var session string
	select {
	case gs := <-g.started:
		session = gs.GameSessionID
	case <-time.After(30 * time.Second):
		t.Fatal("the match was never placed")
	}
	if !strings.Contains(session, fleet) {
		t.Fatalf("session %s is not on fleet %s", session, fleet)
	}
	var first string
	waitUntil(t, "the match's first automatic backfill ticket", func() bool {
		if md := data(session); md.AutoBackfillTicket != nil {
			first = *md.AutoBackfillTicket
		}
		return first != ""
	})

	// The automatic ticket times out at the matchmaker; the owner ends
	// it and writes the next one into the session.
	update("BACKFILL_TIMED_OUT", first)
	waitUntil(t, "the next automatic ticket in the MatchmakerData", func() bool {
		md := data(session)
		return md.AutoBackfillTicket != nil && *md.AutoBackfillTicket != first
	})
	if st := ticket(first).Status; st != types.MatchmakingConfigurationStatusTimedOut {
		t.Errorf("the first automatic ticket is %s", st)
	}

	// A new player is matched into the session's free slot.
	start("t3", "p3")
	u := update("MATCHMAKING_DATA_UPDATED", "")
	if !strings.Contains(u.GameSession.MatchmakerData, `"playerId":"p3"`) {
		t.Errorf("backfilled MatchmakerData %s", u.GameSession.MatchmakerData)
	}
	t3 := ticket("t3")
	ci := t3.GameSessionConnectionInfo
	if t3.Status != types.MatchmakingConfigurationStatusCompleted || ci == nil || aws.ToString(ci.GameSessionArn) != session ||
		len(ci.MatchedPlayerSessions) != 1 {
		t.Fatalf("the new player's ticket %+v", t3)
	}
	ps, err := mm.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: ci.MatchedPlayerSessions[0].PlayerSessionId})
	if err != nil || ps.PlayerSessions[0].Status != types.PlayerSessionStatusReserved || aws.ToString(ps.PlayerSessions[0].GameSessionId) != session {
		t.Errorf("the new player's seat: %v %v", ps, err)
	}
	md := data(session)
	n := 0
	for _, team := range md.Teams {
		n += len(team.Players)
	}
	if n != 3 {
		t.Errorf("MatchmakerData lists %d players, want 3: %+v", n, md)
	}
	if holder2 := ""; db.QueryRow(`SELECT owner FROM matchmaking_leases WHERE config = 'arena'`).Scan(&holder2) != nil || holder2 != holder {
		t.Errorf("the configuration moved from %s to %s during the test", holder, holder2)
	}
	for _, n := range []*relayNode{matchmaker, owner} {
		if n.logs.Contains("sweep failed") {
			t.Error("a node's sweep failed")
		}
	}
}

// A queue whose destinations are owned by different nodes places each
// placement on the best destination with a free process, whichever node
// it was started through: here the first destination (b's fleet) has no
// server process, so both placements land on a's fleet, the one started
// through b placed by a, woken by b's placer. A queue of b's fleets only,
// started through a (which owns none of them), is placed by b.
func TestQueueOverFleetsOfDifferentNodes(t *testing.T) {
	a, b, fa, fb := apart(t)
	ctx := context.Background()
	token := apitest.RegisterCompute(t, a.Client(), fa, location, "host-1", "10.0.0.1")
	for i := range 2 {
		serve(t, a, fa, "host-1", token, fmt.Sprintf("p-%d", i))
	}
	tokenB := apitest.RegisterCompute(t, b.Client(), fb, location, "host-2", "10.0.0.2")
	for _, q := range []struct {
		name string
		to   []string
	}{{"spread", []string{fb, fa}}, {"only-b", []string{fb}}} {
		var dests []types.GameSessionQueueDestination
		for _, f := range q.to {
			dests = append(dests, types.GameSessionQueueDestination{DestinationArn: aws.String(f)})
		}
		if _, err := a.Client().CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String(q.name),
			Destinations: dests}); err != nil {
			t.Fatal(err)
		}
	}
	place := func(through *relayNode, queue, id string) *types.GameSessionPlacement {
		t.Helper()
		if _, err := through.Client().StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(id),
			GameSessionQueueName: aws.String(queue), MaximumPlayerSessionCount: aws.Int32(2)}); err != nil {
			t.Fatal(err)
		}
		var got *types.GameSessionPlacement
		waitUntil(t, "placement "+id+" fulfilled", func() bool {
			out, err := through.Client().DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
			if err != nil {
				return false
			}
			got = out.GameSessionPlacement
			return got.Status == types.GameSessionPlacementStateFulfilled
		})
		return got
	}
	for i, through := range []*relayNode{a, b} {
		got := place(through, "spread", fmt.Sprintf("spread-%d", i))
		if !strings.Contains(aws.ToString(got.GameSessionArn), fa) || aws.ToString(got.IpAddress) != "10.0.0.1" {
			t.Errorf("placement through node %d landed on %s (%s), want fleet %s", i, aws.ToString(got.GameSessionArn),
				aws.ToString(got.IpAddress), fa)
		}
	}
	serve(t, b, fb, "host-2", tokenB, "p-b")
	got := place(a, "only-b", "only-b")
	if !strings.Contains(aws.ToString(got.GameSessionArn), fb) {
		t.Errorf("placement of b's queue through a landed on %s, want fleet %s", aws.ToString(got.GameSessionArn), fb)
	}
}
