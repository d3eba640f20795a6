package multinode

import (
	"context"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/coder/websocket"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/server"
)

// A node's view of the leases is the one it read at its last tick, so for
// up to a tick after a fleet is handed over, a node other than the two
// involved still relays the fleet's process connections to the node that
// handed it on. That node refuses such a connection naming the owner the
// store gives, and the entry relays it there once more, or serves it
// itself when the store says the entry is the owner: the process connects
// at its first attempt. (The benchmark of queue placement on three owning
// nodes failed so, within a tick of its leases settling.) The entry's old
// view is set by hand, a static router, so that nothing races the nodes'
// ticks.
func TestProcessRelayedOnAnOldViewReachesTheOwner(t *testing.T) {
	dsn := schema(t)
	var nodes []*relayNode
	var envs []*apitest.Env
	for range 3 {
		logs := &exectest.LogRecords{}
		e := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret), withOwnership,
			func(c *server.Config) { c.Log = slog.New(logs) })
		nodes = append(nodes, &relayNode{Env: e, logs: logs})
		envs = append(envs, e)
	}
	fleet := apitest.AnywhereFleet(t, nodes[0].Client(), location, "handed-on")
	token := apitest.RegisterCompute(t, nodes[0].Client(), fleet, location, "host-1", "10.0.0.1")
	lease := waitSettled(t, "three nodes", nodes[0].Env, envs...)[fleet]
	var owner *relayNode
	var others []*relayNode
	for _, n := range nodes {
		if n.Server.Service().NodeID() == lease.NodeID {
			owner = n
		} else {
			others = append(others, n)
		}
	}
	if owner == nil {
		t.Fatalf("the fleet's lease %+v names none of the nodes", lease)
	}
	old := others[1] // the node the entries think own the fleet

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var connectVia func(entry, thought *relayNode, pid string)
	connect := func(entry *relayNode, pid string) {
		t.Helper()
		connectVia(entry, old, pid)
	}
	connectVia = func(entry, thought *relayNode, pid string) {
		t.Helper()
		entry.Server.SetRouter(&staticRouter{self: entry.base(), owners: map[string]string{fleet: thought.base()}})
		q := url.Values{"pID": {pid}, "ComputeId": {"host-1"}, "FleetId": {fleet}, "Authorization": {token},
			"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}}
		ws, resp, err := websocket.Dial(ctx, "ws://"+entry.Server.Addr()+"/?"+q.Encode(), nil)
		if err != nil {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Fatalf("%s through a node with an old view: %d %v", pid, status, err)
		}
		defer ws.CloseNow()
		n, err := old.Server.Processes().ProcessHolder(ctx, processes.Ref{FleetID: fleet, ComputeName: "host-1", PID: pid})
		if err != nil || n == nil || n.ID != lease.NodeID {
			t.Errorf("%s is held by %v (%v), want the owner %s", pid, n, err, lease.NodeID)
		}
	}
	// An entry that is not the owner.
	connect(others[0], "p-1")
	// The owner itself, which has not read the hand-off to it yet.
	connect(owner, "p-2")
	// A node that believes it still owns the fleet serves the connection
	// itself, and the store refuses it: it relays it to the owner the
	// store names rather than refuse the process with 403.
	connectVia(old, old, "p-3")

	if !old.logs.Has(map[string]string{"msg": "refused a process connection relayed here: another node owns its fleet",
		"fleet": fleet, "owner": lease.NodeID}) {
		t.Error("the node with the old lease did not log why it refused the connections")
	}
	if !old.logs.Has(map[string]string{"msg": "relaying a process connection to its fleet's owner: this node's view of the leases was behind",
		"fleet": fleet, "owner": lease.NodeID}) {
		t.Error("the node serving a fleet it no longer owns did not log that it relayed the connection")
	}
	noSecretsLogged(t, nodes, token)
}

// The same for API calls: an entry whose old view sends a write to the
// node that handed the fleet on gets, from that node, the owner the store
// names (nothing was written there), and sends the call there once more;
// the client's first attempt succeeds.
func TestAPICallRelayedOnAnOldViewReachesTheOwner(t *testing.T) {
	dsn := schema(t)
	var nodes []*relayNode
	var envs []*apitest.Env
	for range 3 {
		e := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(nodeSecret), withOwnership)
		nodes = append(nodes, &relayNode{Env: e, logs: &exectest.LogRecords{}})
		envs = append(envs, e)
	}
	fleet := apitest.AnywhereFleet(t, nodes[0].Client(), location, "handed-on")
	lease := waitSettled(t, "three nodes", nodes[0].Env, envs...)[fleet]
	var others []*relayNode
	for _, n := range nodes {
		if n.Server.Service().NodeID() != lease.NodeID {
			others = append(others, n)
		}
	}
	entry, old := others[0], others[1]
	entry.Server.SetRouter(&staticRouter{self: entry.base(), owners: map[string]string{fleet: old.base()}})
	once := func(o *gamelift.Options) { o.RetryMaxAttempts = 1 }
	if _, err := entry.Client().UpdateFleetAttributes(context.Background(), &gamelift.UpdateFleetAttributesInput{FleetId: aws.String(fleet),
		Name: aws.String("renamed")}, once); err != nil {
		t.Fatalf("a write through a node with an old view, first attempt: %v", err)
	}
	out, err := nodes[0].Client().DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetAttributes) != 1 || aws.ToString(out.FleetAttributes[0].Name) != "renamed" {
		t.Fatalf("fleet after the write: %+v %v", out, err)
	}
}
