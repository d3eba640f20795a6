package sessions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
)

// seatWorld is a service over a real SQLite store whose memory decides
// seats, fed by the store's commits as the server sets it up.
type seatWorld struct {
	t   testing.TB
	s   *Service
	db  *sqldb.DB
	mem *live.Sessions
	dir string
	now time.Time
	// closeStore closes db once (the cleanup then does not).
	closeStore func() error
}

func newSeatWorld(t testing.TB) *seatWorld {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			db.Close()
		}
	})
	w := &seatWorld{t: t, db: db, dir: dir, now: time.UnixMilli(1767225600000).UTC()}
	w.closeStore = func() error { closed = true; return db.Close() }
	w.s = newService(db, func() time.Time { return w.now })
	f := &game.Fleet{ID: "fleet-1", ARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1", Status: game.FleetActive,
		ComputeType: "ANYWHERE", Locations: []string{"custom-a"}}
	if err := db.Update(ctx, func(tx store.Tx) error { return tx.InsertFleet(f) }); err != nil {
		t.Fatal(err)
	}
	w.mem = live.New()
	if err := w.mem.Load(func(visit func(store.Change) error) error { return db.LoadLive(ctx, visit) }); err != nil {
		t.Fatal(err)
	}
	db.SetCommitHook(w.mem.Apply)
	w.s.SetLive(w.mem)
	return w
}

// session inserts a game session of fleet-1 and returns its id.
func (w *seatWorld) session(name, status, policy string, seats int) string {
	w.t.Helper()
	gs := w.record(name, status, policy, seats)
	if err := w.db.Update(context.Background(), func(tx store.Tx) error { return tx.InsertGameSession(gs) }); err != nil {
		w.t.Fatal(err)
	}
	return gs.ID
}

// record is a game session of fleet-1, not stored.
func (w *seatWorld) record(name, status, policy string, seats int) *game.GameSession {
	return &game.GameSession{ID: "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/" + name, IDString: name,
		FleetID: "fleet-1", FleetARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-1", Location: "custom-a",
		CreationTime: w.now, MaximumPlayerSessionCount: seats, Status: status, PlayerSessionCreationPolicy: policy,
		IPAddress: "10.1.2.3", DNSName: "host.example", Port: 7777}
}

// players returns fresh player sessions, created now.
func (w *seatWorld) players(ids ...string) []*game.PlayerSession {
	var ps []*game.PlayerSession
	for _, id := range ids {
		ps = append(ps, game.NewPlayerSession(id, "", w.s.clock()))
	}
	return ps
}

// counts returns the session's seat count in the store and in memory
// (via a describe from memory).
func (w *seatWorld) counts(id string) (stored, remembered int) {
	w.t.Helper()
	err := w.db.View(context.Background(), func(tx store.Tx) error {
		gs, err := tx.GetGameSession(id)
		if err == nil {
			stored = gs.CurrentPlayerSessionCount
		}
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	list, _, ok, err := w.mem.List(store.SessionFilter{ID: id}, store.Page{})
	if !ok || err != nil || len(list) != 1 {
		w.t.Fatalf("memory describe of %s: %v %v %v", id, list, ok, err)
	}
	return stored, list[0].CurrentPlayerSessionCount
}

// A reservation decided in memory copies the session's fields into the
// player sessions and leaves the store and the memory counting its seats.
func TestReserveFromMemory(t *testing.T) {
	w := newSeatWorld(t)
	id := w.session("open", game.SessionActive, game.AcceptAll, 3)
	ps := w.players("a", "b")
	if err := w.s.reserve(context.Background(), id, ps); err != nil {
		t.Fatal(err)
	}
	err := w.db.View(context.Background(), func(tx store.Tx) error {
		for _, p := range ps {
			got, err := tx.GetPlayerSession(p.ID)
			if err != nil {
				return err
			}
			if got.GameSessionID != id || got.FleetID != "fleet-1" || got.FleetARN == "" || got.IPAddress != "10.1.2.3" ||
				got.DNSName != "host.example" || got.Port != 7777 || got.Status != game.PlayerReserved {
				t.Errorf("stored player session %+v", got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stored, mem := w.counts(id); stored != 2 || mem != 2 {
		t.Errorf("seats: store %d, memory %d, want 2", stored, mem)
	}
}

// A session whose activation has committed but not reached the memory
// yet (the moment between a commit and its hook, when a reader of the
// store may already see the session ACTIVE, or the placement it fulfils
// FULFILLED) takes a reservation: the store decides it, not the memory's
// older ACTIVATING.
func TestReserveOnActivationNotInMemoryYet(t *testing.T) {
	w := newSeatWorld(t)
	ctx := context.Background()
	id := w.session("starting", game.SessionActivating, game.AcceptAll, 2)
	// The activation's changes are held back from the memory, as while
	// its hook has not run.
	var held []store.Change
	w.db.SetCommitHook(func(cs []store.Change) {
		for _, c := range cs {
			if c.ID == id && c.Kind == store.SessionPut && c.Session.Status == game.SessionActive {
				held = append(held, c)
				continue
			}
			w.mem.Apply([]store.Change{c})
		}
	})
	err := w.db.Update(ctx, func(tx store.Tx) error {
		gs, err := tx.GetGameSession(id)
		if err != nil {
			return err
		}
		gs.Status = game.SessionActive
		return tx.UpdateGameSession(gs)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 {
		t.Fatalf("%d activations held back from the memory, want 1", len(held))
	}
	if err := w.s.reserve(ctx, id, w.players("a")); err != nil {
		t.Fatalf("a reservation on a session the store has ACTIVE and the memory not yet: %v", err)
	}
	w.mem.Apply(held)
	if stored, mem := w.counts(id); stored != 1 || mem != 1 {
		t.Errorf("seats: store %d, memory %d, want 1", stored, mem)
	}
	// Still ACTIVATING in the store too: the store's refusal.
	other := w.session("still-starting", game.SessionActivating, game.AcceptAll, 2)
	if err := w.s.reserve(ctx, other, w.players("b")); !game.IsKind(err, game.InvalidGameSessionStatus) {
		t.Errorf("a reservation on an ACTIVATING session: %v, want InvalidGameSessionStatus", err)
	}
}

// Refusals decided in memory are word for word the store's.
func TestSeatRefusalsFromMemoryMatchStore(t *testing.T) {
	w := newSeatWorld(t)
	ctx := context.Background()
	full := w.session("full", game.SessionActive, game.AcceptAll, 1)
	if err := w.s.reserve(ctx, full, w.players("x")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"activating":  w.session("activating", game.SessionActivating, game.AcceptAll, 4),
		"terminating": w.session("terminating", game.SessionTerminating, game.AcceptAll, 4),
		"deny all":    w.session("deny", game.SessionActive, game.DenyAll, 4),
		"ended":       w.session("ended", game.SessionTerminated, game.AcceptAll, 4),
		"full":        full,
		"unknown":     "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/none",
	}
	for name, id := range cases {
		fromMemory := w.s.reserve(ctx, id, w.players("p", "q"))
		fromStore := w.s.reserveInStore(ctx, id, w.players("p", "q"))
		var m, s *game.Error
		if !errors.As(fromMemory, &m) || !errors.As(fromStore, &s) || *m != *s {
			t.Errorf("%s: memory %v, store %v", name, fromMemory, fromStore)
		}
	}
}

// A reservation whose write fails (a player session id that exists: the
// store's unique key refuses the insert) gives its held seats back: the
// caller hears the error, the counts are unchanged, and the seats are
// free for the next caller.
func TestFailedReservationGivesSeatsBack(t *testing.T) {
	w := newSeatWorld(t)
	ctx := context.Background()
	id := w.session("two", game.SessionActive, game.AcceptAll, 2)
	first := w.players("a")
	if err := w.s.reserve(ctx, id, first); err != nil {
		t.Fatal(err)
	}
	clash := w.players("b")
	clash[0].ID = first[0].ID
	if err := w.s.reserve(ctx, id, clash); !game.IsKind(err, game.Conflict) {
		t.Fatalf("reservation with a taken id: %v, want Conflict", err)
	}
	pair := w.players("c", "d") // the session has one seat: refused whole
	if err := w.s.reserve(ctx, id, pair); !game.IsKind(err, game.GameSessionFull) {
		t.Fatalf("two players on one seat: %v, want GameSessionFull", err)
	}
	if stored, mem := w.counts(id); stored != 1 || mem != 1 {
		t.Errorf("after the failed write: store %d, memory %d, want 1", stored, mem)
	}
	last := w.players("e")
	if err := w.s.reserve(ctx, id, last); err != nil {
		t.Fatalf("the seat the failed write held is not free: %v", err)
	}
	err := w.s.reserve(ctx, id, w.players("f"))
	want := "Game session " + id + " is currently full and cannot allow the requested player(s) to join: 2 of 2 seats taken, 1 requested"
	if !game.IsKind(err, game.GameSessionFull) || err.Error() != want {
		t.Errorf("full: %v, want %q", err, want)
	}
	if stored, mem := w.counts(id); stored != 2 || mem != 2 {
		t.Errorf("at the end: store %d, memory %d, want 2", stored, mem)
	}
}

// Failing writes racing good ones on the last seats: none is ever
// acknowledged beyond the seats, and every seat a failed write held is
// free once the race is over.
func TestFailedReservationsRacingLeaveNoGhostSeat(t *testing.T) {
	w := newSeatWorld(t)
	ctx := context.Background()
	id := w.session("race", game.SessionActive, game.AcceptAll, 4)
	taken := w.players("t")
	if err := w.s.reserve(ctx, id, taken); err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 60)
	for i := range 60 {
		ps := w.players("p")
		if i%2 == 0 {
			ps[0].ID = taken[0].ID // fails on insert
		}
		go func() { results <- w.s.reserve(ctx, id, ps) }()
	}
	acked := 1
	for range 60 {
		err := <-results
		switch {
		case err == nil:
			acked++
		case !game.IsKind(err, game.Conflict) && !game.IsKind(err, game.GameSessionFull):
			t.Errorf("unexpected error %v", err)
		}
	}
	t.Logf("%d of 4 seats acknowledged", acked)
	if acked > 4 {
		t.Fatalf("%d seats acknowledged of 4", acked)
	}
	if stored, mem := w.counts(id); stored != acked || mem != acked {
		t.Errorf("store %d, memory %d, want %d acknowledged", stored, mem, acked)
	}
	for range 4 - acked {
		if err := w.s.reserve(ctx, id, w.players("late")); err != nil {
			t.Errorf("a seat is still held: %v", err)
		}
	}
	if err := w.s.reserve(ctx, id, w.players("over")); !game.IsKind(err, game.GameSessionFull) {
		t.Errorf("past the seats: %v, want GameSessionFull", err)
	}
}

// Closing the store under reservations in flight: every caller that
// heard yes is in the store when it opens again, and the memory holds no
// seat for the ones that failed.
func TestStoreClosedUnderReservations(t *testing.T) {
	w := newSeatWorld(t)
	ctx := context.Background()
	const seats = 100
	id := w.session("closing", game.SessionActive, game.AcceptAll, seats)
	type result struct {
		ps  []*game.PlayerSession
		err error
	}
	results := make(chan result, 40)
	for range 40 {
		ps := w.players("p")
		go func() { results <- result{ps, w.s.reserve(ctx, id, ps)} }()
	}
	if err := w.closeStore(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	for range 40 {
		r := <-results
		if r.err == nil {
			acked = append(acked, r.ps[0].ID)
		}
	}
	t.Logf("%d of 40 acknowledged before the store closed", len(acked))
	free := seats - len(acked)
	if _, _, held := w.mem.HoldSeats(id, free); !held {
		t.Errorf("%d acknowledged: the memory does not have the %d other seats free", len(acked), free)
	}
	if _, _, held := w.mem.HoldSeats(id, 1); held {
		t.Errorf("%d acknowledged: the memory has more than %d seats free", len(acked), free)
	}

	db, err := sqlite.Open(ctx, w.dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(ctx, func(tx store.Tx) error {
		gs, err := tx.GetGameSession(id)
		if err != nil {
			return err
		}
		if gs.CurrentPlayerSessionCount != len(acked) {
			t.Errorf("stored seats %d, acknowledged %d", gs.CurrentPlayerSessionCount, len(acked))
		}
		list, _, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: id}, store.Page{Limit: seats})
		if err != nil {
			return err
		}
		if len(list) != len(acked) {
			t.Errorf("stored player sessions %d, acknowledged %d", len(list), len(acked))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
