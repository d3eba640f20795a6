package flexmatch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/wire"
)

// remoteWorld is two services on one store: the matchmaker, whose view
// of ownership says fleet-1 is another node's, and that node (which acts
// for every fleet). The matchmaker sends it the matchmaking of fleet-1's
// sessions through send, which the test sets.
type remoteWorld struct {
	t          *testing.T
	st         store.Store
	now        time.Time
	matchmaker *node
	owner      *node
	session    string
	send       func(ctx context.Context, call *FleetMatchCall) error
	calls      []FleetMatchCall
}

const arenaRules = `{"name":"arena","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10}],
 "teams":[{"name":"red","maxPlayers":2,"minPlayers":1},{"name":"blue","maxPlayers":2,"minPlayers":1}]}`

func newRemoteWorld(t *testing.T) *remoteWorld {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &remoteWorld{t: t, st: st, now: time.UnixMilli(1767225600000).UTC()}
	cfg := control.Config{Account: game.Account{Region: "us-west-2", ID: "123456789012"}}
	clock := func() time.Time { return w.now }
	w.matchmaker, w.owner = newNode(st, cfg, clock), newNode(st, cfg, clock)
	m := owners.New("node-a")
	m.Refresh([]store.FleetOwner{{FleetID: "fleet-1", NodeID: "node-b", Epoch: 1}},
		[]*store.Node{{ID: "node-a", Alive: true}, {ID: "node-b", Address: "http://node-b", Alive: true}}, true)
	w.matchmaker.SetOwners(m)
	w.matchmaker.SetFleetMatch(m, func(ctx context.Context, base string, call *FleetMatchCall) error {
		if base != "http://node-b" {
			t.Errorf("a call to %s", base)
		}
		w.calls = append(w.calls, *call)
		return w.send(ctx, call)
	})

	arn := "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1"
	f := &game.Fleet{ID: "fleet-1", ARN: arn, Status: game.FleetActive, ComputeType: "ANYWHERE", Locations: []string{"custom-a"}}
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.InsertFleet(f) }); err != nil {
		t.Fatal(err)
	}
	q, err := w.owner.CreateGameSessionQueue(ctx, &wire.CreateGameSessionQueueInput{Name: wire.String("q"),
		Destinations: []wire.GameSessionQueueDestination{{DestinationArn: wire.String(arn)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.owner.CreateMatchmakingRuleSet(ctx, &wire.CreateMatchmakingRuleSetInput{Name: wire.String("arena"),
		RuleSetBody: wire.String(arenaRules)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.owner.CreateMatchmakingConfiguration(ctx, &wire.CreateMatchmakingConfigurationInput{Name: wire.String("arena"),
		RuleSetName: wire.String("arena"), RequestTimeoutSeconds: wire.Int32(60), AcceptanceRequired: wire.Bool(false),
		GameSessionQueueArns: []string{*q.GameSessionQueue.GameSessionQueueArn}, FlexMatchMode: wire.String(game.FlexMatchWithQueue),
		BackfillMode: wire.String(game.BackfillAutomatic)}); err != nil {
		t.Fatal(err)
	}

	// A session the match of p1 and p2 made, with its first automatic
	// backfill ticket, as the owner writes them.
	gs := &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/gs-1", IDString: "gs-1",
		FleetID: "fleet-1", FleetARN: arn, Location: "custom-a", CreationTime: w.now, MaximumPlayerSessionCount: 4,
		Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll, IPAddress: "10.1.2.3", Port: 7777}
	err = w.owner.mmUpdate(ctx, func(x *mmTx) error {
		c, rs, err := w.owner.configAndRules(x.tx, "arena")
		if err != nil {
			return err
		}
		if gs.MatchmakerData, err = w.owner.buildMatchmakerData(c, rs, "match-1", "",
			[]game.TicketPlayer{{ID: "p1", Team: "red"}, {ID: "p2", Team: "blue"}}); err != nil {
			return err
		}
		if err := x.tx.InsertGameSession(gs); err != nil {
			return err
		}
		return x.autoBackfill(c, gs)
	})
	if err != nil {
		t.Fatal(err)
	}
	w.session = gs.ID
	return w
}

// step runs one matchmaking step on the matchmaker.
func (w *remoteWorld) step() {
	w.t.Helper()
	if err := w.matchmaker.StepMatchmaking(context.Background()); err != nil {
		w.t.Fatal(err)
	}
}

// state is what the test compares before and after a call: the tickets'
// statuses, the session's seats and its MatchmakerData.
func (w *remoteWorld) state() (tickets map[string]string, seats int, data string) {
	w.t.Helper()
	tickets = map[string]string{}
	err := w.st.View(context.Background(), func(tx store.Tx) error {
		for _, status := range []string{game.TicketQueued, game.TicketSearching, game.TicketPlacing, game.TicketCompleted, game.TicketTimedOut} {
			list, err := tx.ListTickets("arena", status, "", 1000)
			if err != nil {
				return err
			}
			for _, t := range list {
				tickets[t.ID] = t.Status
			}
		}
		gs, err := tx.GetGameSession(w.session)
		if err != nil {
			return err
		}
		seats, data = gs.CurrentPlayerSessionCount, gs.MatchmakerData
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return tickets, seats, data
}

// autoTicket is the automatic backfill ticket the session's MatchmakerData
// names.
func (w *remoteWorld) autoTicket() string {
	w.t.Helper()
	_, _, data := w.state()
	d, ok := readMatchmakerData(data)
	if !ok || d.AutoBackfillTicket == nil {
		w.t.Fatalf("MatchmakerData %s", data)
	}
	return *d.AutoBackfillTicket
}

// The matchmaker leaves a backfill match of another node's session to
// that node: a call that fails leaves the tickets searching, and the next
// step sends the match again; a call the owner ran, whose answer was lost,
// is not made twice, and running it again changes nothing.
func TestBackfillOfAnotherNodesSessionIsMadeByItsOwner(t *testing.T) {
	w := newRemoteWorld(t)
	ctx := context.Background()
	first := w.autoTicket()
	if _, err := w.matchmaker.StartMatchmaking(ctx, &wire.StartMatchmakingInput{TicketId: wire.String("t3"), ConfigurationName: wire.String("arena"),
		Players: []wire.Player{player("p3", 10)}}); err != nil {
		t.Fatal(err)
	}

	w.send = func(context.Context, *FleetMatchCall) error { return errors.New("the owner cannot be reached") }
	w.step()
	tickets, seats, data := w.state()
	if len(w.calls) != 1 || tickets["t3"] != game.TicketSearching || tickets[first] != game.TicketSearching || seats != 0 ||
		strings.Contains(data, "p3") {
		t.Fatalf("after a failed call: calls %+v, tickets %v, %d seats, %s", w.calls, tickets, seats, data)
	}
	call := w.calls[0]
	if call.Config != "arena" || len(call.Tickets) != 2 || call.TimedOut != "" {
		t.Errorf("the call %+v", call)
	}

	// The owner makes it, but its answer is lost.
	w.send = func(ctx context.Context, call *FleetMatchCall) error {
		if err := w.owner.RunFleetMatch(ctx, call); err != nil {
			t.Errorf("the owner refused the match: %v", err)
		}
		return errors.New("the answer was lost")
	}
	w.step()
	tickets, seats, data = w.state()
	next := w.autoTicket()
	if len(w.calls) != 2 || tickets["t3"] != game.TicketCompleted || tickets[first] != game.TicketCompleted || seats != 1 ||
		!strings.Contains(data, `"playerId":"p3"`) || next == first || tickets[next] != game.TicketQueued {
		t.Fatalf("after the owner made the match: calls %d, tickets %v, %d seats, %s", len(w.calls), tickets, seats, data)
	}
	w.step()
	if len(w.calls) != 2 {
		t.Errorf("a step after the match sent %d calls more", len(w.calls)-2)
	}
	// The same call again, as a retry after the lost answer would send it.
	if err := w.owner.RunFleetMatch(ctx, &call); err != nil {
		t.Fatal(err)
	}
	if t2, s2, d2 := w.state(); len(t2) != len(tickets) || s2 != seats || d2 != data {
		t.Errorf("the call run again changed the tickets %v → %v, seats %d → %d, data %s → %s", tickets, t2, seats, s2, data, d2)
	}
}

// An automatic backfill ticket of another node's session that times out
// is ended by the owner, which writes the next one into the session; until
// the owner has it, the ticket stays due and is sent again.
func TestTimedOutAutomaticBackfillOfAnotherNodesSession(t *testing.T) {
	w := newRemoteWorld(t)
	ctx := context.Background()
	first := w.autoTicket()
	w.send = func(context.Context, *FleetMatchCall) error { return errors.New("the owner cannot be reached") }
	w.step()
	w.now = w.now.Add(61 * time.Second)
	w.step()
	tickets, _, _ := w.state()
	if tickets[first] != game.TicketSearching || len(w.calls) != 1 || w.calls[0].TimedOut != first {
		t.Fatalf("after a failed call: tickets %v, calls %+v", tickets, w.calls)
	}
	w.send = func(ctx context.Context, call *FleetMatchCall) error { return w.owner.RunFleetMatch(ctx, call) }
	w.step()
	tickets, _, data := w.state()
	next := w.autoTicket()
	if tickets[first] != game.TicketTimedOut || next == first || tickets[next] != game.TicketSearching || len(w.calls) != 2 {
		t.Fatalf("after the owner ran it: tickets %v, next %s, calls %+v", tickets, next, w.calls)
	}
	if err := w.owner.RunFleetMatch(ctx, &FleetMatchCall{Config: "arena", TimedOut: first}); err != nil {
		t.Fatal(err)
	}
	if t2, _, d2 := w.state(); len(t2) != len(tickets) || d2 != data {
		t.Errorf("the call run again changed the tickets %v → %v, data %s → %s", tickets, t2, data, d2)
	}
}

// The owner refuses a call that names tickets of another configuration,
// a ticket that is not automatic, or nothing.
func TestFleetMatchCallRefusals(t *testing.T) {
	w := newRemoteWorld(t)
	ctx := context.Background()
	if _, err := w.owner.CreateMatchmakingConfiguration(ctx, &wire.CreateMatchmakingConfigurationInput{Name: wire.String("other"),
		RuleSetName: wire.String("arena"), RequestTimeoutSeconds: wire.Int32(60), AcceptanceRequired: wire.Bool(false),
		FlexMatchMode: wire.String(game.FlexMatchStandalone)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.owner.StartMatchmaking(ctx, &wire.StartMatchmakingInput{TicketId: wire.String("x1"), ConfigurationName: wire.String("other"),
		Players: []wire.Player{player("q1", 10)}}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]*FleetMatchCall{
		"nothing":               {Config: "arena"},
		"both":                  {Config: "arena", TimedOut: "x1", Tickets: []matchmaking.Placed{{TicketID: "x1"}}},
		"another configuration": {Config: "arena", Tickets: []matchmaking.Placed{{TicketID: "x1", Team: "red"}}},
		"not automatic":         {Config: "other", TimedOut: "x1"},
	} {
		if err := w.owner.RunFleetMatch(ctx, call); !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("%s: %v, want InvalidRequest", name, err)
		}
	}
	if tickets, _, _ := w.state(); len(tickets) != 1 {
		t.Errorf("refused calls changed the tickets: %v", tickets)
	}
}
