package multinode

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/anylift/anylift/internal/apitest"
	model "github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// 200 concurrent CreatePlayerSession calls on one game session, sent
// through two nodes in turn: exactly the free seats succeed, the rest are
// told GameSessionFullException; then singles and pairs, the same.
func TestSeatsThroughTwoNodes(t *testing.T) {
	dsn := schema(t)
	const secret = "seats-through-two-nodes-secret"
	a := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret))
	b := apitest.Start(t, apitest.WithPostgres(dsn), withNodeListen(secret))
	const fleet, loc, seats = "fleet-11111111-2222-3333-4444-555555555555", "custom-seats", 8
	acct := model.Account{Region: apitest.Region, ID: "123456789012"}
	session := func(id string) string {
		gs := &model.GameSession{
			ID: acct.GameSessionARN(fleet, loc, id), IDString: id, FleetID: fleet, FleetARN: acct.FleetARN(fleet),
			Location: loc, ComputeName: "compute-1", CreationTime: time.Now().UTC().Truncate(time.Millisecond),
			MaximumPlayerSessionCount: seats, Status: model.SessionActive,
			PlayerSessionCreationPolicy: model.AcceptAll, ProtectionPolicy: model.NoProtection, IPAddress: "192.0.2.10", Port: 7777,
		}
		if err := a.Server.Store().Update(context.Background(), func(tx store.Tx) error { return tx.InsertGameSession(gs) }); err != nil {
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
