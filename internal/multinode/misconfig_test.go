package multinode

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/server"
)

// startErr starts a node on dsn and returns why it did not start; a node
// that starts is closed again and reported as a failure of the test.
func startErr(t *testing.T, dsn string, opts ...apitest.Option) error {
	t.Helper()
	cfg := server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Region: apitest.Region, AccountID: "123456789012",
		Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}, Store: dsn}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
	if err == nil {
		srv.Close(context.Background())
	}
	return err
}

func withNodeListen(secret string) apitest.Option {
	return func(c *server.Config) { c.NodeListen, c.NodeSecret = "127.0.0.1:0", secret }
}

func mustRefuse(t *testing.T, err error, what string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: the node started", what)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: the refusal does not say %q: %v", what, w, err)
		}
	}
	t.Logf("%s: %v", what, err)
}

// A node that cannot serve correctly beside the live nodes of its
// database refuses to start and says what is missing: no --node-listen
// beside another node, or beside a node that has none. A node secret the
// others refuse is logged as an error.
func TestMisconfiguredNodesRefuseToStart(t *testing.T) {
	dsn := schema(t)
	a := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret))
	self := a.Server.Service().NodeID()

	mustRefuse(t, startErr(t, dsn), "no --node-listen beside a node", self, "--node-listen", "ANYLIFT_NODE_SECRET")
	// Another secret is said loudly, not refused: rotating the secret
	// restarts the nodes one by one.
	var logs exectest.SyncBuffer
	if err := startErr(t, dsn, withNodeListen("another-secret-of-some-length"), func(c *server.Config) {
		c.Log = slog.New(slog.NewTextHandler(&logs, nil))
	}); err != nil {
		t.Fatalf("a node with another secret: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR msg=\"another node refuses this node's signature") ||
		!strings.Contains(l, self) || !strings.Contains(l, "signature does not match") {
		t.Errorf("a node with another secret logged:\n%s", l)
	}
	// A node with the same secret joins.
	b := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret))
	if b.Server.NodeAddr() == "" {
		t.Fatal("second node has no node listener")
	}

	// A node alone without --node-listen serves (one node on PostgreSQL);
	// a node with one then refuses to start beside it.
	lone := schema(t)
	c := apitest.Start(t, apitest.WithPostgres(lone))
	mustRefuse(t, startErr(t, lone, withNodeListen(nodeSecret)), "beside a node without --node-listen",
		c.Server.Service().NodeID(), "without --node-listen")
}

// A node killed moments ago still looks alive for --node-ttl, but its
// heartbeat does not move: a node started in its place, without
// --node-listen, is not refused for it.
func TestNodeStartsBesideTheRecordOfADeadNode(t *testing.T) {
	dsn := schema(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UnixMilli()
	if _, err := db.Exec(`INSERT INTO nodes (id, address, started, heartbeat, draining) VALUES ('node-killed', '', $1, $1, 0)`, now); err != nil {
		// the schema is created by the first node to start
		apitest.Start(t, apitest.WithPostgres(dsn)).Server.Close(context.Background())
		if _, err := db.Exec(`INSERT INTO nodes (id, address, started, heartbeat, draining) VALUES ('node-killed', '', $1, $1, 0)`, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := startErr(t, dsn); err != nil {
		t.Fatalf("refused beside a dead node's record: %v", err)
	}
}

// Fleet ownership is on by default for a node on PostgreSQL with
// --node-listen, and off for one without, which can only serve alone;
// asked for without --node-listen, the node refuses to start and says
// what is missing. A node in the shared mode (--fleet-ownership=false)
// beside owning nodes turns ownership off on all of them while it is
// live, which both sides say loudly.
func TestFleetOwnershipByDefault(t *testing.T) {
	logged := func() (*exectest.LogRecords, apitest.Option) {
		l := &exectest.LogRecords{}
		return l, func(c *server.Config) { c.Log = slog.New(l) }
	}
	lone := schema(t)
	lonely, lonelyLog := logged()
	alone := apitest.Start(t, apitest.WithPostgres(lone), lonelyLog)
	if alone.Server.Owners() != nil {
		t.Error("a node without --node-listen takes part in fleet ownership")
	}
	if !lonely.Has(map[string]string{"msg": "fleet ownership off",
		"why": "no --node-listen: this node can only serve alone, and writes every fleet through the database"}) {
		t.Error("a node without --node-listen does not say why it does not own fleets")
	}
	alone.Server.Close(context.Background())
	mustRefuse(t, startErr(t, lone, func(c *server.Config) { c.FleetOwnership = server.OwnershipOn }),
		"--fleet-ownership without --node-listen", "--fleet-ownership needs --node-listen", "ANYLIFT_NODE_SECRET")

	dsn := schema(t)
	aLog, aLogged := logged()
	a := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret), aLogged, func(c *server.Config) { c.NodeTTL = 3 * time.Second })
	if a.Server.Owners() == nil {
		t.Fatal("a node with --node-listen does not take part in fleet ownership")
	}
	if !aLog.Has(map[string]string{"msg": "fleet ownership on", "why": "the default with --node-listen"}) {
		t.Error("a node owning fleets by default does not say so")
	}
	exectest.Eventually(t, "ownership in force on one node", 10*time.Second, func() (bool, string) {
		return a.Server.Owners().Fencing(), "not fencing"
	})

	bLog, bLogged := logged()
	b := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret), bLogged, withShared)
	if b.Server.Owners() != nil {
		t.Error("a node with --fleet-ownership=false takes part in fleet ownership")
	}
	self := a.Server.Service().NodeID()
	if !bLog.Has(map[string]string{"level": "WARN", "node": self}) || !bLog.Contains("this node runs with --fleet-ownership=false beside node "+self) {
		t.Error("a node in the shared mode beside an owning node does not warn that it turns ownership off")
	}
	exectest.Eventually(t, "ownership off while a node in the shared mode is live", 10*time.Second, func() (bool, string) {
		return !a.Server.Owners().Fencing(), "still fencing"
	})
	// A node joining them warns of the one in the shared mode.
	cLog, cLogged := logged()
	apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret), cLogged)
	shared := b.Server.Service().NodeID()
	if !cLog.Has(map[string]string{"level": "WARN", "node": shared}) || !cLog.Contains("node "+shared) ||
		!cLog.Contains("takes no part in fleet ownership") {
		t.Error("a node joining does not warn of a node in the shared mode")
	}
	// Once it stops, ownership is in force again.
	b.Server.Close(context.Background())
	exectest.Eventually(t, "ownership in force again", 10*time.Second, func() (bool, string) {
		return a.Server.Owners().Fencing(), "not fencing"
	})
}
