package multinode

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/apitest"
	nodes "github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/exectest"
	model "github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	sdk "github.com/anylift/anylift/sdk/server"
)

// staticRouter says that the fleets in owners are owned by the node at
// the address given, and that every other fleet is served where it
// arrives. self is the node's own address.
type staticRouter struct {
	self   string
	owners map[string]string
}

func (r *staticRouter) Route(fleet string) (string, bool) {
	base, ok := r.owners[fleet]
	if !ok || base == r.self {
		return "", true
	}
	return base, false
}

// relayNode is one node of a pair sharing a PostgreSQL schema.
type relayNode struct {
	*apitest.Env
	logs *exectest.LogRecords
}

// base is the node's forwarding address.
func (n *relayNode) base() string { return "http://" + n.Server.NodeAddr() }

// relayPair starts nodes A and B on one schema with the same node secret,
// logging everything, with opts. They run in the shared mode, so that a
// test's static router (route) alone says which node serves a fleet;
// withOwnership among opts makes them own fleets, as by default.
func relayPair(t *testing.T, opts ...apitest.Option) (a, b *relayNode) {
	return relayPairWith(t, opts, opts)
}

// relayPairWith is relayPair with options of each node.
func relayPairWith(t *testing.T, optsA, optsB []apitest.Option) (a, b *relayNode) {
	dsn := schema(t)
	start := func(opts []apitest.Option) *relayNode {
		logs := &exectest.LogRecords{}
		o := append([]apitest.Option{apitest.WithPostgres(dsn), withNodeListen(nodeSecret), withShared, func(c *server.Config) {
			c.Log = slog.New(logs)
		}}, opts...)
		return &relayNode{Env: apitest.Start(t, o...), logs: logs}
	}
	return start(optsA), start(optsB)
}

// route gives both nodes a static router on which fleets are owned by a.
func route(a, b *relayNode, fleets ...string) {
	owners := map[string]string{}
	for _, f := range fleets {
		owners[f] = a.base()
	}
	a.Server.SetRouter(&staticRouter{self: a.base(), owners: owners})
	b.Server.SetRouter(&staticRouter{self: b.base(), owners: owners})
}

var requestsLine = regexp.MustCompile(`(?m)^anylift_api_requests_total\{code="([^"]*)",operation="([^"]*)"\} (\d+)$`)

// answered is how many op calls the node answered with code (OK or an
// exception), from its /metrics.
func (n *relayNode) answered(t *testing.T, op, code string) int {
	t.Helper()
	resp, err := http.Get(n.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, m := range requestsLine.FindAllStringSubmatch(string(b), -1) {
		if m[1] == code && m[2] == op {
			v, _ := strconv.Atoi(m[3])
			return v
		}
	}
	return 0
}

// answeredBy checks that a answered want calls of op with code and b none.
func answeredBy(t *testing.T, a, b *relayNode, op, code string, want int) {
	t.Helper()
	if got := a.answered(t, op, code); got != want {
		t.Errorf("%s %s: the owner answered %d, want %d", op, code, got, want)
	}
	if got := b.answered(t, op, code); got != 0 {
		t.Errorf("%s %s: the entry answered %d itself, want 0", op, code, got)
	}
}

// noSecretsLogged fails if a node logged a secret: the API secret key, the
// node secret, a SigV4 signature, or one of tokens.
func noSecretsLogged(t *testing.T, nodes []*relayNode, tokens ...string) {
	t.Helper()
	for i, n := range nodes {
		for _, s := range append([]string{apitest.SecretKey, nodeSecret, "Signature="}, tokens...) {
			if s != "" && n.logs.Contains(s) {
				t.Errorf("node %d logged a secret (%.12s...)", i, s)
			}
		}
	}
}

// Calls sent to node B about a fleet node A owns are answered by A, in
// both protocols, by fleet id, by game session ARN and by alias, errors
// included, with the same bytes as A gives directly; calls naming several
// fleets or another fleet are answered by B. A request with a bad SigV4
// signature that reaches A through the node channel is refused by A as
// it would be directly, and forged node signatures are refused with 401.
func TestRelayedCallsAreAnsweredByTheOwner(t *testing.T) {
	a, b := relayPair(t)
	ctx := context.Background()
	fleet := apitest.AnywhereFleet(t, a.Client(), location, "owned-by-a")
	other := apitest.CreateAnywhereFleet(t, a.Client(), location, "served-anywhere")
	al, err := a.Client().CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("to-a"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fleet)}})
	if err != nil {
		t.Fatal(err)
	}
	route(a, b, fleet)

	// The AWS SDK (CBOR) through B.
	gl := b.Client()
	out, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetAttributes) != 1 || *out.FleetAttributes[0].FleetId != fleet {
		t.Fatalf("DescribeFleetAttributes through B: %v %v", out, err)
	}
	answeredBy(t, a, b, "DescribeFleetAttributes", "OK", 1)
	if _, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{AliasId: al.Alias.AliasId}); err != nil {
		t.Fatalf("DescribeGameSessions by alias through B: %v", err)
	}
	answeredBy(t, a, b, "DescribeGameSessions", "OK", 1)
	_, err = gl.UpdateFleetAttributes(ctx, &gamelift.UpdateFleetAttributesInput{FleetId: aws.String(fleet), Description: aws.String("written by A")})
	if err != nil {
		t.Fatal(err)
	}
	answeredBy(t, a, b, "UpdateFleetAttributes", "OK", 1)

	// AWS JSON 1.1 through B, an answer and an error, compared with A's own.
	for _, c := range []struct{ op, body, code string }{
		{"ListCompute", `{"FleetId":"` + fleet + `"}`, "OK"},
		{"DescribeGameSessions", `{"GameSessionId":"arn:aws:gamelift:us-west-2::gamesession/` + fleet + `/nothing-here"}`, "NotFoundException"},
	} {
		viaB := b.CallJSON(t, c.op, c.body)
		direct := a.CallJSON(t, c.op, c.body)
		if viaB.Status != direct.Status || !bytes.Equal(viaB.Body, direct.Body) ||
			viaB.Header.Get("X-Amzn-Errortype") != direct.Header.Get("X-Amzn-Errortype") || viaB.Header.Get("X-Amzn-Requestid") == "" {
			t.Errorf("%s through B: %d %v %s; directly: %d %v %s", c.op, viaB.Status, viaB.Header, viaB.Body, direct.Status, direct.Header, direct.Body)
		}
		answeredBy(t, a, b, c.op, c.code, 2)
	}

	// Several fleets, or another fleet: B answers.
	if _, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet, other}}); err != nil {
		t.Fatal(err)
	}
	if _, err := gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(other)}); err != nil {
		t.Fatal(err)
	}
	if got := b.answered(t, "DescribeFleetAttributes", "OK"); got != 1 {
		t.Errorf("B answered %d DescribeFleetAttributes naming two fleets, want 1", got)
	}
	if got := b.answered(t, "ListCompute", "OK"); got != 1 {
		t.Errorf("B answered %d ListCompute for its own fleet, want 1", got)
	}

	// A bad SigV4 signature, refused by B, and by A when it gets there
	// through the node channel: the same answer as A gives directly.
	bad := func(env *relayNode) *http.Request {
		req := env.NewJSONRequest(t, "ListCompute", `{"FleetId":"`+fleet+`"}`)
		apitest.Sign(t, req, apitest.AccessKey, "not-the-secret", time.Now())
		return req
	}
	direct := a.Do(t, bad(a))
	viaB := b.Do(t, bad(b))
	relayed := relay(t, nodes.NewClient([]byte(nodeSecret), nil), bad(b), a.base())
	for name, r := range map[string]*apitest.Response{"through B": viaB, "relayed to A": relayed} {
		if r.Status != http.StatusForbidden || r.ErrorType(t) != direct.ErrorType(t) || r.JSON(t)["message"] != direct.JSON(t)["message"] {
			t.Errorf("bad signature %s: %d %s; directly to A: %d %s", name, r.Status, r.Body, direct.Status, direct.Body)
		}
	}
	if got := a.answered(t, "ListCompute", "InvalidSignatureException"); got != 2 {
		t.Errorf("A refused %d bad signatures, want 2 (direct and relayed)", got)
	}
	// The same request well signed, relayed by hand, is served by A.
	good := b.NewJSONRequest(t, "ListCompute", `{"FleetId":"`+fleet+`"}`)
	apitest.Sign(t, good, apitest.AccessKey, apitest.SecretKey, time.Now())
	if r := relay(t, nodes.NewClient([]byte(nodeSecret), nil), good, a.base()); r.Status != http.StatusOK {
		t.Errorf("a good request relayed by hand: %d %s", r.Status, r.Body)
	}

	// Forged node signatures on both relay paths: 401, nothing served.
	forger := nodes.NewClient([]byte("another-secret-of-enough-length"), nil)
	rec := httptest.NewRecorder()
	if err := forger.RelayAPI(rec, serverSide(t, good), nil, a.base()); !errors.Is(err, nodes.ErrNotAnswered) || !strings.Contains(err.Error(), "401") {
		t.Errorf("API relay with another secret: %v", err)
	}
	up := httptest.NewRequest(http.MethodGet, "/?FleetId="+fleet+"&ComputeId=c&pID=p&Authorization=t", nil)
	up.Header.Set("Connection", "Upgrade")
	up.Header.Set("Upgrade", "websocket")
	if _, err := forger.RelayProcess(ctx, httptest.NewRecorder(), up, a.base()); !errors.Is(err, nodes.ErrNotAnswered) || !strings.Contains(err.Error(), "401") {
		t.Errorf("process relay with another secret: %v", err)
	}
	for _, path := range []string{nodes.APIPath, nodes.ProcessPath} {
		method := http.MethodPost
		if path == nodes.ProcessPath {
			method = http.MethodGet
		}
		req, _ := http.NewRequest(method, a.base()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("unsigned %s %s: %d", method, path, resp.StatusCode)
		}
	}
	noSecretsLogged(t, []*relayNode{a, b})
}

// serverSide turns a client request into the request a server hands its
// handler, as the entry node's API listener would.
func serverSide(t *testing.T, req *http.Request) *http.Request {
	t.Helper()
	body, _ := io.ReadAll(req.Body)
	in := httptest.NewRequest(req.Method, req.URL.RequestURI(), bytes.NewReader(body))
	in.Host = req.URL.Host
	in.Header = req.Header.Clone()
	return in
}

// relay sends req through the node channel to the node at base, as an
// entry node would, and returns the answer it wrote.
func relay(t *testing.T, c *nodes.Client, req *http.Request, base string) *apitest.Response {
	t.Helper()
	in := serverSide(t, req)
	body, _ := io.ReadAll(in.Body)
	rec := httptest.NewRecorder()
	if err := c.RelayAPI(rec, in, body, base); err != nil {
		t.Fatalf("relaying: %v", err)
	}
	return &apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// A key's rate is counted once, at the node the client reached: calls
// relayed to the owner do not use up the key's rate there.
func TestRelayedCallsAreRateLimitedAtTheEntry(t *testing.T) {
	a, b := relayPair(t, func(c *server.Config) { c.RateLimit = access.Rate{PerSecond: 0.001, Burst: 4} })
	fleet := apitest.AnywhereFleet(t, a.Client(), location, "owned-by-a") // two of A's four
	route(a, b, fleet)
	call := func(n *relayNode) int {
		return n.CallJSON(t, "ListCompute", `{"FleetId":"`+fleet+`"}`).Status
	}
	for i := range 4 {
		if got := call(b); got != http.StatusOK {
			t.Fatalf("call %d through B: %d", i, got)
		}
	}
	if got := call(b); got != http.StatusBadRequest {
		t.Errorf("fifth call through B: %d, want 400 ThrottlingException", got)
	}
	for i := range 2 {
		if got := call(a); got != http.StatusOK {
			t.Fatalf("call %d directly to A after four relayed: %d", i, got)
		}
	}
	if got := call(a); got != http.StatusBadRequest {
		t.Errorf("A's fifth: %d, want 400 ThrottlingException", got)
	}
	answeredBy(t, a, b, "ListCompute", "OK", 6)
}

// dials records the hosts a game server's SDK connects to.
type dials struct {
	mu    sync.Mutex
	hosts []string
	next  http.RoundTripper
}

func (d *dials) RoundTrip(req *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.hosts = append(d.hosts, req.URL.Host)
	d.mu.Unlock()
	return d.next.RoundTrip(req)
}

func (d *dials) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.hosts...)
}

// waitUntil polls cond until it holds, failing the test after a deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Game server processes that connect to node B for a fleet node A owns are
// served by A: A holds their connections (counted on its node listener,
// B's API listener counting the other end), they host sessions created
// through either node, RefreshConnection sends them back to the URL they
// reached (B, ws:// or wss://), and when A lets the fleet go their
// connections close and the SDKs come back.
func TestRelayedProcessesAreServedByTheOwner(t *testing.T) {
	a, b := relayPair(t)
	ctx := context.Background()
	fleet := apitest.AnywhereFleet(t, a.Client(), location, "processes-on-a")
	token := apitest.RegisterCompute(t, a.Client(), fleet, location, "host-1", "10.0.0.1")
	route(a, b, fleet)

	type proc struct {
		p       *sdk.Process
		dials   *dials
		started chan string
	}
	connect := func(pid, url string, tr *http.Transport) *proc {
		d := &dials{next: tr}
		p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: url, ProcessID: pid, HostID: "host-1", FleetID: fleet, AuthToken: token},
			sdk.Options{Getenv: func(string) string { return "" }, Exit: func(int) {}, HealthCheckInterval: time.Hour,
				ReconnectMin: 10 * time.Millisecond, DrainTimeout: 10 * time.Millisecond,
				HTTPClient: &http.Client{Transport: d}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("%s connecting to B: %v", pid, err)
		}
		t.Cleanup(func() { p.Destroy() })
		pr := &proc{p: p, dials: d, started: make(chan string, 4)}
		if err := p.ProcessReady(sdk.ProcessParameters{Port: 9000, OnStartGameSession: func(gs sdk.GameSession) { pr.started <- gs.GameSessionID }}); err != nil {
			t.Fatal(err)
		}
		return pr
	}
	plain := connect("p-plain", "ws://"+b.Server.Addr(), http.DefaultTransport.(*http.Transport).Clone())
	insecure := http.DefaultTransport.(*http.Transport).Clone()
	insecure.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	secure := connect("p-tls", "wss://"+b.Server.Addr(), insecure)

	// held says which node holds pid's connection, as B sees it, and
	// the URL its record keeps.
	held := func(pid string) (string, string) {
		n, err := b.Server.Processes().ProcessHolder(ctx, processes.Ref{FleetID: fleet, ComputeName: "host-1", PID: pid})
		if err != nil || n == nil {
			return "", ""
		}
		var p *model.Process
		if err := a.Server.Store().View(ctx, func(tx store.Tx) error {
			p, err = tx.GetProcess(fleet, "host-1", pid)
			return err
		}); err != nil || !p.Connected {
			return "", ""
		}
		return n.ID, p.Endpoint
	}
	for pid, want := range map[string]string{"p-plain": "ws://" + b.Server.Addr(), "p-tls": "wss://" + b.Server.Addr()} {
		if node, endpoint := held(pid); node != a.Server.Service().NodeID() || endpoint != want {
			t.Errorf("%s is held by %q (A is %q), reached at %q, want %q", pid, node, a.Server.Service().NodeID(), endpoint, want)
		}
	}
	if st := a.Server.ListenerStats("node"); st.Upgraded != 2 {
		t.Errorf("A's node listener holds %d WebSockets, want 2", st.Upgraded)
	}
	if st := b.Server.ListenerStats("API"); st.Upgraded != 2 {
		t.Errorf("B's API listener holds %d WebSockets, want 2", st.Upgraded)
	}

	// Sessions created through B and through A reach the processes and
	// activate.
	var created []string
	for _, n := range []*relayNode{b, a} {
		var gs *gamelift.CreateGameSessionOutput
		waitUntil(t, "a free process", func() bool {
			var err error
			gs, err = n.Client().CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
				MaximumPlayerSessionCount: aws.Int32(2)})
			return err == nil
		})
		created = append(created, *gs.GameSession.GameSessionId)
	}
	answeredBy(t, a, b, "CreateGameSession", "OK", 2)
	for _, pr := range []*proc{plain, secure} {
		select {
		case id := <-pr.started:
			if id != created[0] && id != created[1] {
				t.Errorf("started %s, created %v", id, created)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a session never reached its process")
		}
		if err := pr.p.ActivateGameSession(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range created {
		out, err := b.Client().DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
		if err != nil || out.GameSessions[0].Status != types.GameSessionStatusActive {
			t.Fatalf("session %s through B: %v %v", id, out, err)
		}
	}

	// RefreshConnection names the URL each process reached: B.
	for pid, pr := range map[string]*proc{"p-plain": plain, "p-tls": secure} {
		before := len(pr.dials.list())
		if err := a.Server.Processes().DrainProcess(ctx, processes.Ref{FleetID: fleet, ComputeName: "host-1", PID: pid}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, pid+" to reconnect after RefreshConnection", func() bool { return len(pr.dials.list()) > before })
		if got := pr.dials.list()[before]; got != b.Server.Addr() {
			t.Errorf("%s was sent to %s, want B at %s", pid, got, b.Server.Addr())
		}
	}
	// Each SDK closes its old connection (1000) once the new one is its
	// own; A serves both ends of the move.
	waitUntil(t, "the refreshed-away connections to close", func() bool {
		closed := func(pid string) bool {
			return a.logs.Has(map[string]string{"msg": "process connection closed", "pid": pid, "code": "1000"})
		}
		return closed("p-plain") && closed("p-tls") &&
			a.Server.ListenerStats("node").Upgraded == 2 && b.Server.ListenerStats("API").Upgraded == 2
	})

	// A lets the fleet go: the connections close and the SDKs come back.
	before := plain.dials.list()
	if n := a.Server.CloseFleet(fleet, "fleet moved"); n != 2 {
		t.Errorf("CloseFleet closed %d connections, want 2", n)
	}
	waitUntil(t, "the processes to reconnect", func() bool {
		_, e1 := held("p-plain")
		return len(plain.dials.list()) > len(before) && e1 != "" && a.Server.ListenerStats("node").Upgraded == 2
	})
	if err := plain.p.ProcessEnding(); err != nil {
		t.Errorf("ProcessEnding after reconnecting: %v", err)
	}
	noSecretsLogged(t, []*relayNode{a, b}, token)
}

// Relayed process connections count against the owner's WebSocket cap
// (on its node listener): past it, the owner's 503 with Retry-After
// reaches the process through the entry, before the handshake is checked.
func TestRelayedProcessesCountAgainstTheOwnersCap(t *testing.T) {
	a, b := relayPairWith(t, []apitest.Option{func(c *server.Config) { c.Limits.MaxWebSockets = 1 }}, nil)
	fleet := apitest.AnywhereFleet(t, a.Client(), location, "capped-on-a")
	token := apitest.RegisterCompute(t, a.Client(), fleet, location, "host-1", "10.0.0.1")
	route(a, b, fleet)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func(pid string) (*websocket.Conn, *http.Response, error) {
		q := url.Values{"pID": {pid}, "ComputeId": {"host-1"}, "FleetId": {fleet}, "Authorization": {token}, "sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}}
		return websocket.Dial(ctx, "ws://"+b.Server.Addr()+"/?"+q.Encode(), nil)
	}
	first, _, err := dial("p-1")
	if err != nil {
		t.Fatal(err)
	}
	defer first.CloseNow()
	// The owner counts the connection as upgraded once its handler has
	// taken it over, just after the 101 left.
	waitUntil(t, "A to count the first connection", func() bool { return a.Server.ListenerStats("node").Upgraded == 1 })
	_, resp, err := dial("p-2")
	if err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the owner's cap: %v %v", resp, err)
	}
	if st := a.Server.ListenerStats("node"); st.Upgraded != 1 || st.RefusedWebSockets != 1 {
		t.Errorf("A's node listener: %+v", st)
	}
	if st := b.Server.ListenerStats("API"); st.Upgraded != 1 {
		t.Errorf("B's API listener: %+v", st)
	}
	// A handshake the owner refuses (a bad token) is refused as directly.
	q := url.Values{"pID": {"p-3"}, "ComputeId": {"host-1"}, "FleetId": {fleet}, "Authorization": {"not-a-token"}}
	first.CloseNow()
	waitUntil(t, "the first connection to close", func() bool { return a.Server.ListenerStats("node").Upgraded == 0 })
	if _, resp, err := websocket.Dial(ctx, "ws://"+b.Server.Addr()+"/?"+q.Encode(), nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a bad token through B: %v %v", resp, err)
	}
}

// A relayed process connection outlives every HTTP deadline and
// connection cap, on the entry's API listener and on the owner's node
// listener: a quiet, healthy process stays connected.
func TestRelayedProcessOutlivesHTTPLimits(t *testing.T) {
	const short = time.Second
	limits := func(c *server.Config) {
		c.Limits = server.Limits{ReadHeaderTimeout: short, ReadTimeout: short, WriteTimeout: 2 * short, IdleTimeout: short, MaxConns: 2}
	}
	a, b := relayPair(t, limits)
	fleet := apitest.AnywhereFleet(t, a.Client(), location, "limits-on-a")
	token := apitest.RegisterCompute(t, a.Client(), fleet, location, "host-1", "10.0.0.1")
	route(a, b, fleet)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := url.Values{"pID": {"p-1"}, "ComputeId": {"host-1"}, "FleetId": {fleet}, "Authorization": {token}, "sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}}
	ws, _, err := websocket.Dial(ctx, "ws://"+b.Server.Addr()+"/?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	exchange := func(frame string) {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := ws.Read(ctx); err != nil || !strings.Contains(string(got), `"StatusCode":200`) {
			t.Fatalf("%s answered %s %v", frame, got, err)
		}
	}
	exchange(`{"Action":"ActivateServerProcess","RequestId":"r1","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":[]}`)
	for _, addr := range []string{a.Server.NodeAddr(), b.Server.Addr()} {
		// A stalled request is cut: more than every HTTP deadline passes.
		stalled, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		stalled.Write([]byte("GET / HTTP/1.1\r\n"))
		stalled.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(stalled); err != nil {
			t.Fatalf("a stalled request on %s was not cut: %v", addr, err)
		}
		stalled.Close()
		// Idle connections beyond the cap evict each other, not the
		// process's.
		var idle []net.Conn
		for range 4 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			idle = append(idle, c)
		}
		idle[0].SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(idle[0]); err != nil {
			t.Fatalf("the oldest idle connection on %s stayed: %v", addr, err)
		}
	}
	exchange(`{"Action":"HeartbeatServerProcess","RequestId":"r2","HealthStatus":true}`)
	if st := a.Server.ListenerStats("node"); st.Upgraded != 1 || st.Open > 2 {
		t.Errorf("A's node listener: %+v", st)
	}
	if st := b.Server.ListenerStats("API"); st.Upgraded != 1 || st.Open > 2 {
		t.Errorf("B's API listener: %+v", st)
	}
}

// With fleet ownership and no router yet, a write sent to a node that
// does not own the fleet is refused by the store's fence and relayed
// once to the owner the refusal names, which makes it.
func TestFencedWriteIsRelayedToTheOwner(t *testing.T) {
	a, b := relayPair(t, withOwnership)
	gl := a.Client()
	var fleets []string
	fleets = append(fleets, apitest.AnywhereFleet(t, gl, location, "f0"))
	for i := 1; i < 8; i++ {
		fleets = append(fleets, apitest.CreateAnywhereFleet(t, gl, location, "f"+strconv.Itoa(i)))
	}
	got := waitSettled(t, "two nodes", a.Env, a.Env, b.Env)
	writes := map[*relayNode]int{}
	for _, f := range fleets {
		owner, other := a, b
		if got[f].NodeID == b.Server.Service().NodeID() {
			owner, other = b, a
		}
		r := other.CallJSON(t, "UpdateFleetAttributes", `{"FleetId":"`+f+`","Description":"via the other node"}`)
		if r.Status != http.StatusOK {
			t.Fatalf("fleet %s written through the node not owning it: %d %s", f, r.Status, r.Body)
		}
		writes[owner]++
	}
	for _, n := range []*relayNode{a, b} {
		if got := n.answered(t, "UpdateFleetAttributes", "OK"); got != writes[n] {
			t.Errorf("a node answered %d writes, owns the fleets of %d", got, writes[n])
		}
	}
}
