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
