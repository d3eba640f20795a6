package multinode

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	model "github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// 200 concurrent CreatePlayerSession calls on one game session, sent
// through two nodes in turn: exactly the free seats succeed, the rest are
// told GameSessionFullException; then singles and pairs, the same. In the
// shared mode both nodes decide seats in the database; with fleet
// ownership (the default), the owner decides them, the other node
// relaying its calls.
func TestSeatsThroughTwoNodes(t *testing.T) {
	t.Run("shared", func(t *testing.T) { seatsThroughTwoNodes(t, withShared) })
	t.Run("owned", func(t *testing.T) { seatsThroughTwoNodes(t) })
}

func seatsThroughTwoNodes(t *testing.T, opts ...apitest.Option) {
	dsn := schema(t)
	const secret = "seats-through-two-nodes-secret"
	a := apitest.Start(t, append([]apitest.Option{apitest.WithPostgres(dsn), withNodeListen(secret)}, opts...)...)
	b := apitest.Start(t, append([]apitest.Option{apitest.WithPostgres(dsn), withNodeListen(secret)}, opts...)...)
	const fleet, loc, seats = "fleet-11111111-2222-3333-4444-555555555555", "custom-seats", 8
	acct := model.Account{Region: apitest.Region, ID: "123456789012"}
	seeder := a // the node whose store writes the sessions: with ownership, the fleet's owner
	session := func(id string) string {
		gs := &model.GameSession{
			ID: acct.GameSessionARN(fleet, loc, id), IDString: id, FleetID: fleet, FleetARN: acct.FleetARN(fleet),
			Location: loc, ComputeName: "compute-1", CreationTime: time.Now().UTC().Truncate(time.Millisecond),
			MaximumPlayerSessionCount: seats, Status: model.SessionActive,
			PlayerSessionCreationPolicy: model.AcceptAll, ProtectionPolicy: model.NoProtection, IPAddress: "192.0.2.10", Port: 7777,
		}
		if err := seeder.Server.Store().Update(context.Background(), func(tx store.Tx) error { return tx.InsertGameSession(gs) }); err != nil {
			t.Fatal(err)
		}
		return gs.ID
	}
	err := a.Server.Store().Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertLocation(&model.Location{Name: loc, ARN: acct.LocationARN(loc)}); err != nil {
			return err
		}
		return tx.InsertFleet(&model.Fleet{ID: fleet, ARN: acct.FleetARN(fleet), Status: model.FleetActive, ComputeType: "ANYWHERE",
			Locations: []string{loc}, CreationTime: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Server.Owners() != nil {
		// The fleet, written to the store without a lease, is taken at a
		// tick by the node that should own it; the race starts once both
		// nodes' views name that node (until then a call may be answered
		// 500 "retry", which the race's clients, not retrying, would count).
		owner := func(e *apitest.Env) string {
			if _, held := e.Server.Owners().Held(fleet); held {
				return "http://" + e.Server.NodeAddr()
			}
			if base, local := e.Server.Owners().Route(fleet); !local {
				return base
			}
			return "" // not known yet
		}
		exectest.Eventually(t, "both nodes to agree on the fleet's owner", 30*time.Second, func() (bool, string) {
			oa, ob := owner(a), owner(b)
			return oa != "" && oa == ob, fmt.Sprintf("a says %q, b says %q", oa, ob)
		})
		if _, held := b.Server.Owners().Held(fleet); held {
			seeder = b // the store refuses the other node's writes of the fleet
		}
		t.Logf("the fleet is owned by %s, the node of the %s client", owner(a), map[bool]string{true: "first", false: "second"}[seeder == a])
	}
	clients := []*gamelift.Client{a.Client(), b.Client()}

	single := session("gsess-two-nodes")
	r := apitest.RaceSeats(t, clients, single, 200, 0)
	if len(r.Acked) != seats || r.Full != 200-seats || len(r.Other) > 0 {
		t.Fatalf("singles: %d reserved, %d full, other errors %v; want %d and %d", len(r.Acked), r.Full, r.Other, seats, 200-seats)
	}
	apitest.CheckSeats(t, clients[0], single, r.Acked)
	apitest.CheckSeats(t, clients[1], single, r.Acked)

	mixed := session("gsess-two-nodes-mixed")
	r = apitest.RaceSeats(t, clients, mixed, 100, 50)
	if len(r.Acked) != seats || len(r.Other) > 0 {
		t.Fatalf("singles and pairs: %d seats reserved, other errors %v; want %d", len(r.Acked), r.Other, seats)
	}
	apitest.CheckSeats(t, clients[1], mixed, r.Acked)
}
