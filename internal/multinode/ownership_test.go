package multinode

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

// withOwnership makes a node of the ownership tests: as a node on
// PostgreSQL with a node listener (withNodeListen) does by default, it
// takes part in fleet ownership (undoing withShared), and its node TTL is
// shortened, so that a dead node's fleets are taken over in seconds.
func withOwnership(c *server.Config) {
	c.FleetOwnership = server.OwnershipDefault
	c.NodeTTL = 3 * time.Second
}

// withShared makes a node run in the shared mode (--fleet-ownership=false):
// every node writes every fleet through the database.
func withShared(c *server.Config) { c.FleetOwnership = server.OwnershipOff }

// leases reads every fleet's lease from the store.
func leases(t *testing.T, e *apitest.Env) map[string]store.FleetOwner {
	t.Helper()
	out := map[string]store.FleetOwner{}
	if err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
		list, err := tx.FleetOwners()
		for _, l := range list {
			out[l.FleetID] = l
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// settled reports whether every fleet is owned by the node that should
// own it among nodes.
func settled(got map[string]store.FleetOwner, nodes []*apitest.Env) bool {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.Server.Service().NodeID())
	}
	sort.Strings(ids)
	for _, l := range got {
		if l.NodeID != owners.Owner(l.FleetID, ids) {
			return false
		}
	}
	return true
}

// newFleets creates the location and n Anywhere fleets in it through e,
// and returns their ids.
func newFleets(t *testing.T, e *apitest.Env, n int) []string {
	t.Helper()
	ctx := context.Background()
	gl := e.Client()
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		out, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String(fmt.Sprintf("f%d", i)), ComputeType: types.ComputeTypeAnywhere,
			Locations: []types.LocationConfiguration{{Location: aws.String(location)}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *out.FleetAttributes.FleetId)
	}
	return ids
}

func waitSettled(t *testing.T, what string, via *apitest.Env, nodes ...*apitest.Env) map[string]store.FleetOwner {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := leases(t, via)
		if settled(got, nodes) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: leases never settled: %v", what, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Fleets spread over the nodes that own fleets, move a few at a time to a
// node that joins (only those it wins, each lease's epoch one up), and
// leave a node that stops at once, before its heartbeat is old.
func TestFleetOwnershipFollowsNodes(t *testing.T) {
	dsn := schema(t)
	const secret = "fleet-ownership-test-secret"
	a := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	b := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	ctx := context.Background()
	const fleets = 24
	newFleets(t, a, fleets)
	two := waitSettled(t, "two nodes", a, a, b)
	if len(two) != fleets {
		t.Fatalf("%d leases for %d fleets", len(two), fleets)
	}
	per := map[string]int{}
	for _, l := range two {
		per[l.NodeID]++
	}
	if len(per) != 2 {
		t.Fatalf("24 fleets over two nodes: %v", per)
	}

	c := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret), withOwnership)
	three := waitSettled(t, "a third node joins", a, a, b, c)
	cID := c.Server.Service().NodeID()
	for id, l := range three {
		was := two[id]
		switch {
		case l == was:
		case l.NodeID == cID && l.Epoch == was.Epoch+1:
		default:
			t.Errorf("fleet %s went from %+v to %+v: only moves to the new node, one epoch up", id, was, l)
		}
	}

	// A node that stops hands its fleets over before it goes: no fleet is
	// left to a node that no longer answers.
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Server.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	after := leases(t, a)
	for id, l := range after {
		if l.NodeID == cID {
			t.Errorf("fleet %s still owned by the node that stopped", id)
		}
	}
	if !settled(after, []*apitest.Env{a, b}) {
		t.Errorf("after a clean stop, each fleet is owned by its node among the two left: %v", after)
	}
}
