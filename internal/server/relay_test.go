package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/storetestenv"
)

// fenced is a store that refuses fleet writes, as a store with fleet
// ownership refuses those of a node that does not own the fleet: with
// *store.NotOwner, writing nothing.
type fenced struct {
	store.Store
	mu     sync.Mutex
	owners map[string]*store.NotOwner // fleet → the refusal
}

func (f *fenced) refuse(fleet string, no *store.NotOwner) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owners[fleet] = no
}

func (f *fenced) Update(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.Update(ctx, func(tx store.Tx) error { return fn(&fencedTx{Tx: tx, f: f}) })
}

type fencedTx struct {
	store.Tx
	f *fenced
}

func (t *fencedTx) UpdateFleet(fl *game.Fleet) error {
	t.f.mu.Lock()
	no := t.f.owners[fl.ID]
	t.f.mu.Unlock()
	if no != nil {
		return no
	}
	return t.Tx.UpdateFleet(fl)
}

const relaySecret = "relay-test-node-secret-0123456789"

// fencedNode starts a node with a node listener on a fenced store of the
// PostgreSQL schema dsn.
func fencedNode(t *testing.T, dsn string) (*apitest.Env, *fenced) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	f := &fenced{Store: st, owners: map[string]*store.NotOwner{}}
	cfg := server.Config{Listen: "127.0.0.1:0", Store: dsn, Region: apitest.Region, AccountID: "123456789012",
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, NodeListen: "127.0.0.1:0", NodeSecret: relaySecret}
	srv, err := server.StartOn(ctx, cfg, f)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return &apitest.Env{Server: srv, URL: srv.URL(), Config: cfg}, f
}

var answeredLine = regexp.MustCompile(`(?m)^anylift_api_requests_total\{code="([^"]*)",operation="([^"]*)"\} (\d+)$`)

// answered is how many op calls env answered with code, from /metrics.
func answered(t *testing.T, env *apitest.Env, op, code string) int {
	for _, m := range answeredLine.FindAllStringSubmatch(scrape(t, env), -1) {
		if m[1] == code && m[2] == op {
			n, _ := strconv.Atoi(m[3])
			return n
		}
	}
	return 0
}

// Without any router, a write the store refuses as another node's goes to
// that node once, and is answered there; one for a fleet without an owner
// at the moment, or one refused again at the owner, is answered 503 with
// Retry-After, which the AWS SDKs retry.
func TestNotOwnerIsRelayedOnce(t *testing.T) {
	dsn := storetestenv.PostgresDSN(t)
	if dsn == "" {
		t.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	dsn = storetestenv.FreshSchema(t, dsn)
	a, fa := fencedNode(t, dsn)
	b, fb := fencedNode(t, dsn)
	gl := a.Client()
	owned := apitest.AnywhereFleet(t, gl, "custom-fenced", "owned-by-a")
	orphan := apitest.CreateAnywhereFleet(t, gl, "custom-fenced", "no-owner")
	moving := apitest.CreateAnywhereFleet(t, gl, "custom-fenced", "moving")
	aAt, bAt := "http://"+a.Server.NodeAddr(), "http://"+b.Server.NodeAddr()
	fb.refuse(owned, &store.NotOwner{FleetID: owned, NodeID: "node-a", Address: aAt})
	fb.refuse(orphan, &store.NotOwner{FleetID: orphan})
	fb.refuse(moving, &store.NotOwner{FleetID: moving, NodeID: "node-a", Address: aAt})
	fa.refuse(moving, &store.NotOwner{FleetID: moving, NodeID: "node-b", Address: bAt})

	update := func(fleet string) *apitest.Response {
		return b.CallJSON(t, "UpdateFleetAttributes", `{"FleetId":"`+fleet+`","Description":"changed"}`)
	}
	if r := update(owned); r.Status != http.StatusOK {
		t.Fatalf("a write B may not make, sent to B: %d %s", r.Status, r.Body)
	}
	if n := answered(t, a, "UpdateFleetAttributes", "OK"); n != 1 {
		t.Errorf("A answered %d, want 1", n)
	}
	out, err := b.Client().DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{owned}})
	if err != nil || aws.ToString(out.FleetAttributes[0].Description) != "changed" {
		t.Errorf("the write is not there: %v %v", out, err)
	}
	for fleet, who := range map[string]*apitest.Env{orphan: b, moving: a} {
		r := update(fleet)
		if r.Status != http.StatusInternalServerError || r.ErrorType(t) != "InternalServiceException" || r.Header.Get("Retry-After") != "1" {
			t.Errorf("fleet %s: %d %v %s", fleet, r.Status, r.Header, r.Body)
		}
		if n := answered(t, who, "UpdateFleetAttributes", "InternalServiceException"); n != 1 {
			t.Errorf("fleet %s: the 503 counted %d times where it was given, want 1", fleet, n)
		}
	}
	if ok, refused := answered(t, b, "UpdateFleetAttributes", "OK"), answered(t, b, "UpdateFleetAttributes", "InternalServiceException"); ok != 0 || refused != 1 {
		t.Errorf("B counted %d and %d 503s, want none of the calls it relayed", ok, refused)
	}
}
