package multinode

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
)

// nodeClient is the AWS SDK for Go v2 client of one node, without the
// balancer and without retries.
func (c *cluster) nodeClient(n *node) *gamelift.Client {
	return gamelift.New(gamelift.Options{Region: apitest.Region, BaseEndpoint: aws.String("http://" + n.addr),
		Credentials:      credentials.NewStaticCredentialsProvider(apitest.AccessKey, apitest.SecretKey, ""),
		RetryMaxAttempts: 1})
}

// owner returns the node whose lease on fleet the store holds, or nil.
func (c *cluster) owner(fleet string) *node {
	c.t.Helper()
	var addr string
	err := c.db.QueryRow(`SELECT n.address FROM fleet_owners o JOIN nodes n ON n.id = o.node_id WHERE o.fleet_id = $1`, fleet).Scan(&addr)
	if err != nil {
		return nil
	}
	for _, n := range c.nodes {
		if n.internal == addr {
			return n
		}
	}
	return nil
}

// With fleet ownership (the default), a fleet's owner paused (SIGSTOP) past the node TTL
// loses the fleet to the other node, and once resumed changes nothing: 200
// concurrent CreatePlayerSession calls sent through both nodes right after
// it resumes take exactly the free seats. Then the new owner is killed
// (SIGKILL): the first node takes the fleet back, its processes reconnect,
// and placements go on; everything acknowledged is there.
func TestFleetOwnerPausedThenKilled(t *testing.T) {
	c := prepareCluster(t)
	c.start(2, c.bin)
	g := newGame(t, c, 2, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	acked, errs := g.placeMany(ctx, "before", 4)
	if len(errs) > 0 {
		t.Fatalf("placements with both nodes up: %v", errs)
	}
	first := c.owner(g.fleet)
	if first == nil {
		t.Fatal("the fleet has no owner")
	}
	other := c.nodes[0]
	if other == first {
		other = c.nodes[1]
	}

	first.cmd.Process.Signal(syscall.SIGSTOP)
	took := c.waitFor("the other node to take the paused owner's fleet", 20*time.Second, func() bool { return c.owner(g.fleet) == other })
	t.Logf("fleet taken over %v after the owner paused", took)
	first.cmd.Process.Signal(syscall.SIGCONT)

	// Each placed session has 4 seats and one player: 3 are free.
	session := acked[0].session
	clients := []*gamelift.Client{c.nodeClient(first), c.nodeClient(other)}
	r := apitest.RaceSeats(t, clients, session, 200, 0)
	if len(r.Acked) != 3 || len(r.Other) > 0 {
		t.Fatalf("after the paused owner resumed: %d reserved, %d full, other errors %v; want 3 reserved", len(r.Acked), r.Full, r.Other)
	}
	apitest.CheckSeats(t, clients[0], session, append(r.Acked, acked[0].player))

	more, errs := g.placeMany(ctx, "resumed", 2)
	if len(errs) > 0 {
		t.Fatalf("placements after the owner resumed: %v", errs)
	}
	acked = append(acked, more...)

	other.cmd.Process.Signal(syscall.SIGKILL)
	<-other.done
	took = c.waitFor("the first node to take the fleet back", 20*time.Second, func() bool { return c.owner(g.fleet) == first })
	t.Logf("fleet taken back %v after its owner was killed", took)
	more, errs = g.placeMany(ctx, "after-kill", 2)
	if len(errs) > 0 {
		t.Fatalf("placements after the owner was killed: %v", errs)
	}
	acked = append(acked, more...)
	g.check(t, c, acked)
}
