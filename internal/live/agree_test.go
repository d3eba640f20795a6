package live_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owned/ownedtest"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/store/storetest"
	"github.com/anylift/anylift/internal/storetestenv"
)

// The tests here hold the memory to one rule: for every question, it
// answers exactly what the store answers (sessions, order, NextToken,
// errors), on SQLite and on PostgreSQL, whatever the writes before.

var epoch = time.UnixMilli(1767225600000).UTC()

// world is a store fed to a memory, and the ids it holds. owned: the
// memory is that of the fleets a node owns on PostgreSQL (internal/owned),
// which owns every fleet of the world.
type world struct {
	t      testing.TB
	db     *sqldb.DB
	mem    *live.Sessions
	owned  bool
	r      *rand.Rand
	fleets []string
	ids    []string
	seq    int
}

// eachMemory runs fn on each store with a memory fed every commit
// (SQLite, PostgreSQL) and, on PostgreSQL, with the memory of the fleets
// a node owns.
func eachMemory(t *testing.T, fn func(t *testing.T, db *sqldb.DB, own bool)) {
	storetest.EachDB(t, func(t *testing.T, db *sqldb.DB) { fn(t, db, false) })
	if storetestenv.PostgresDSN(t) != "" {
		t.Run("postgres-owned", func(t *testing.T) { fn(t, storetest.Postgres(t), true) })
	}
}

func newWorld(t testing.TB, db *sqldb.DB, seed uint64, own bool) *world {
	w := &world{t: t, db: db, mem: live.New(), owned: own, r: rand.New(rand.NewPCG(seed, 7))}
	var mem *owned.Memory
	if own {
		mem = ownedtest.Start(t, db, w.mem)
	} else {
		w.mem.SetHorizon(db)
		db.SetCommitHook(w.mem.Apply)
	}
	w.update(func(tx store.Tx) error {
		for i := range 2 {
			f := &game.Fleet{ID: fmt.Sprintf("fleet-%d", i), Status: game.FleetActive, CreationTime: epoch, Locations: []string{"custom-a", "custom-b"}}
			if err := tx.InsertFleet(f); err != nil {
				return err
			}
			w.fleets = append(w.fleets, f.ID)
		}
		return nil
	})
	if own {
		ownedtest.WaitLoaded(t, mem, w.fleets...)
	}
	return w
}

func (w *world) update(fn func(store.Tx) error) {
	w.t.Helper()
	if err := w.db.Update(context.Background(), fn); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) pick(list ...string) string { return list[w.r.IntN(len(list))] }

// newSession returns a random session; creation times collide often, so
// ties are broken by row key.
func (w *world) newSession() *game.GameSession {
	w.seq++
	fleet := w.pick(w.fleets...)
	idString := fmt.Sprintf("gsess-%04d", w.seq)
	max := 1 + w.r.IntN(4)
	s := &game.GameSession{
		ID: "arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/" + idString, IDString: idString,
		Name: w.pick("alpha", "beta", "gamma", "", "Matt's"), FleetID: fleet, FleetARN: "arn:fleet/" + fleet,
		Location: w.pick("custom-a", "custom-b"), ComputeName: w.pick("c1", "c2"),
		CreationTime:              epoch.Add(time.Duration(w.r.IntN(40)) * time.Millisecond),
		MaximumPlayerSessionCount: max, CurrentPlayerSessionCount: w.r.IntN(max + 1),
		Status:                      w.pick(game.SessionActive, game.SessionActive, game.SessionActive, game.SessionActivating, game.SessionTerminating, game.SessionTerminated, game.SessionError),
		PlayerSessionCreationPolicy: w.pick(game.AcceptAll, game.AcceptAll, game.DenyAll),
		IPAddress:                   "10.0.0.1", Port: 7000 + w.seq,
		Properties: w.props(),
	}
	if !s.Live() {
		s.TerminationTime = s.CreationTime.Add(time.Second)
	}
	return s
}

func (w *world) props() []game.Property {
	var out []game.Property
	for range w.r.IntN(4) {
		out = append(out, game.Property{Key: w.pick("mode", "map", "a.b", "z"), Value: w.pick("ffa", "ctf", "m1", "m2", "", "Z")})
	}
	return out
}

// step makes one random write transaction; some fail after writing, and
// must leave the memory as they leave the store.
func (w *world) step() {
	var err error
	fail := w.r.IntN(10) == 0
	err = w.db.Update(context.Background(), func(tx store.Tx) error {
		for range 1 + w.r.IntN(3) {
			if err := w.change(tx); err != nil {
				return err
			}
		}
		if fail {
			return errFail
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFail) {
		w.t.Error(err) // not Fatal: step also runs on other goroutines
	}
}

var errFail = errors.New("failing on purpose")

func (w *world) change(tx store.Tx) error {
	if len(w.ids) == 0 || w.r.IntN(4) == 0 {
		s := w.newSession()
		w.ids = append(w.ids, s.ID)
		return tx.InsertGameSession(s)
	}
	s, err := tx.GetGameSession(w.pick(w.ids...))
	if game.IsKind(err, game.NotFound) {
		return nil // inserted by a transaction that failed
	}
	if err != nil {
		return err
	}
	at := epoch.Add(time.Minute)
	switch w.r.IntN(6) {
	case 0: // status, seats or properties change
		s.Status = w.pick(game.SessionActive, game.SessionActivating, game.SessionTerminating, game.SessionTerminated)
		s.MaximumPlayerSessionCount = 1 + w.r.IntN(4)
		s.Name = w.pick("alpha", "delta", "")
		s.Properties = w.props()
		return tx.UpdateGameSession(s)
	case 1, 2: // players join
		ps := []*game.PlayerSession{{ID: game.NewPlayerSessionID(), PlayerID: "p", CreationTime: at, Status: game.PlayerReserved}}
		err := tx.ReserveSeats(s.ID, ps, epoch)
		if game.IsKind(err, game.GameSessionFull) || game.IsKind(err, game.InvalidGameSessionStatus) {
			return nil // refused: a transaction may go on
		}
		return err
	case 3: // a player leaves or is accepted
		list, _, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: s.ID}, store.Page{})
		if err != nil || len(list) == 0 {
			return err
		}
		_, err = tx.SetPlayerSessionStatus(list[0].ID, w.pick(game.PlayerActive, game.PlayerCompleted, game.PlayerTimedOut), at)
		return err
	case 4: // reservations time out
		_, err := tx.ExpireReservations(at, at, 3)
		return err
	default: // the session ends
		if err := tx.EndPlayerSessions(s.ID, at); err != nil {
			return err
		}
		s.Status, s.TerminationTime, s.CurrentPlayerSessionCount = game.SessionTerminated, at, 0
		return tx.UpdateGameSession(s)
	}
}

// filter returns a random filter expression over the seeded values.
func (w *world) filter(depth int) string {
	if depth > 0 && w.r.IntN(3) == 0 {
		switch w.r.IntN(3) {
		case 0:
			return "NOT " + w.filter(depth-1)
		case 1:
			return "(" + w.filter(depth-1) + " AND " + w.filter(depth-1) + ")"
		}
		return "(" + w.filter(depth-1) + " OR " + w.filter(depth-1) + ")"
	}
	eqne := w.pick("=", "<>")
	cmp := w.pick("=", "<>", "<", ">", "<=", ">=")
	switch w.r.IntN(7) {
	case 0:
		return fmt.Sprintf("gameSessionProperties.%s %s '%s'", w.pick("mode", "map", "a.b", "z", "none"), eqne, w.pick("ffa", "ctf", "m1", "", "Z"))
	case 1:
		return fmt.Sprintf("hasAvailablePlayerSessions %s %s", eqne, w.pick("true", "false"))
	case 2:
		return fmt.Sprintf("gameSessionName %s '%s'", eqne, w.pick("alpha", "beta", "", "Matt\\'s"))
	case 3:
		return fmt.Sprintf("maximumSessions %s %d", cmp, w.r.IntN(5))
	case 4:
		return fmt.Sprintf("playerSessionCount %s %d", cmp, w.r.IntN(5))
	case 5:
		return fmt.Sprintf("creationTimeMillis %s %d", cmp, store.Millis(epoch)+int64(w.r.IntN(40)))
	}
	return fmt.Sprintf("gameSessionId %s '%s'", eqne, w.pick(w.ids...))
}

func (w *world) query() (store.SearchQuery, error) {
	q := store.SearchQuery{FleetID: w.pick(w.fleets...)}
	if w.r.IntN(3) == 0 {
		q.Location = w.pick("custom-a", "custom-b", "custom-none")
	}
	if w.r.IntN(5) > 0 {
		e, err := search.ParseFilter(w.filter(3))
		if err != nil {
			return q, err
		}
		q.Filter = e
	}
	if w.r.IntN(4) > 0 {
		src := w.pick("gameSessionId", "gameSessionName", "gameSessionProperties.mode", "gameSessionProperties.z",
			"gameSessionProperties.map", "gameSessionProperties.none",
			"maximumSessions", "playerSessionCount", "creationTimeMillis", "hasAvailablePlayerSessions") + w.pick(" ASC", " DESC")
		srt, err := search.ParseSort(src)
		if err != nil {
			return q, err
		}
		q.Sort = &srt
	}
	return q, nil
}

// sqlSearch and sqlList ask the store.
func (w *world) sqlSearch(q store.SearchQuery, p store.Page) (list []*game.GameSession, next string, err error) {
	err = w.db.View(context.Background(), func(tx store.Tx) error {
		list, next, err = tx.SearchGameSessions(q, p)
		return err
	})
	return list, next, err
}

func (w *world) sqlList(f store.SessionFilter, p store.Page) (list []*game.GameSession, next string, err error) {
	err = w.db.View(context.Background(), func(tx store.Tx) error {
		list, next, err = tx.ListGameSessions(f, p)
		return err
	})
	return list, next, err
}

// same fails unless both answers are equal.
func same(t testing.TB, what string, gotL, wantL []*game.GameSession, got, want string, gotErr, wantErr error) {
	t.Helper()
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: memory error %v, store error %v", what, gotErr, wantErr)
	}
	if got != want {
		t.Fatalf("%s: memory token %q, store token %q", what, got, want)
	}
	if len(gotL) != len(wantL) {
		t.Fatalf("%s: memory %d sessions %s, store %d %s", what, len(gotL), ids(gotL), len(wantL), ids(wantL))
	}
	for i := range gotL {
		if g, s := ownedtest.Norm(gotL[i]), ownedtest.Norm(wantL[i]); !reflect.DeepEqual(g, s) {
			t.Fatalf("%s: session %d differs:\nmemory %+v\nstore  %+v", what, i, g, s)
		}
	}
}

func ids(list []*game.GameSession) string {
	var b strings.Builder
	for _, s := range list {
		b.WriteString(" " + s.IDString)
	}
	return b.String()
}

// checkSearch pages through q on both and compares every page, with
// the memory choosing its plan and with it forced to each plan in turn
// (a walk in the sort's order, a heap over the smallest source).
func (w *world) checkSearch(q store.SearchQuery, limit int) bool {
	w.t.Helper()
	answered := true
	for _, plan := range []string{"", "walk", "heap"} {
		live.ForcePlan(plan)
		answered = w.checkSearchPlan(q, limit, plan) && answered
	}
	live.ForcePlan("")
	return answered
}

func (w *world) checkSearchPlan(q store.SearchQuery, limit int, plan string) bool {
	w.t.Helper()
	p := store.Page{Limit: limit}
	for page := 0; ; page++ {
		ml, mn, ok, merr := w.mem.Search(q, p)
		if !ok {
			return false
		}
		sl, sn, serr := w.sqlSearch(q, p)
		same(w.t, fmt.Sprintf("search %+v plan %q page %d", describe(q), plan, page), ml, sl, mn, sn, merr, serr)
		encodedAgrees(w.t, fmt.Sprintf("search %+v page %d", describe(q), page), w.searchEncoded(q, p), sl, sn, serr)
		if mn == "" || merr != nil || page > 100 {
			return true
		}
		p.Token = mn
	}
}

func describe(q store.SearchQuery) string {
	s := q.FleetID + " " + q.Location
	if q.Filter != nil {
		s += " filter " + q.Filter.String()
	}
	if q.Sort != nil {
		s += " sort " + q.Sort.String()
	}
	return s
}

// checkList pages through a describe on both and compares every page.
func (w *world) checkList(f store.SessionFilter, limit int) bool {
	w.t.Helper()
	p := store.Page{Limit: limit}
	for page := 0; ; page++ {
		ml, mn, ok, merr := w.mem.List(f, p)
		if !ok {
			return false
		}
		sl, sn, serr := w.sqlList(f, p)
		same(w.t, fmt.Sprintf("describe %+v page %d", f, page), ml, sl, mn, sn, merr, serr)
		encodedAgrees(w.t, fmt.Sprintf("describe %+v page %d", f, page), w.listEncoded(f, p), sl, sn, serr)
		if mn == "" || merr != nil || page > 100 {
			return true
		}
		p.Token = mn
	}
}

// checkAll compares a round of random questions; it returns how many
// the memory answered.
func (w *world) checkAll(rounds int) (answered int) {
	for range rounds {
		q, err := w.query()
		if err != nil {
			w.t.Fatal(err)
		}
		if w.checkSearch(q, 1+w.r.IntN(7)) {
			answered++
		}
		f := store.SessionFilter{FleetID: w.pick(w.fleets...)}
		if w.r.IntN(2) == 0 {
			f.Status = w.pick(game.SessionActive, game.SessionActivating, game.SessionTerminating, game.SessionTerminated)
		}
		if w.r.IntN(3) == 0 {
			f.Location = w.pick("custom-a", "custom-b")
		}
		if w.checkList(f, 1+w.r.IntN(7)) {
			answered++
		}
		id := store.SessionFilter{ID: w.pick(w.ids...), Status: f.Status}
		if w.checkList(id, 0) {
			answered++
		}
	}
	return answered
}

func TestMemoryAgreesWithStore(t *testing.T) {
	eachMemory(t, func(t *testing.T, db *sqldb.DB, own bool) {
		w := newWorld(t, db, 1, own)
		answered := 0
		for round := range 30 {
			for range 10 {
				w.step()
			}
			answered += w.checkAll(10)
			if round%10 == 9 {
				w.checkReload()
			}
			w.checkMetrics()
		}
		t.Logf("memory answered %d of 900 questions (%d live sessions)", answered, w.mem.Len())
		if answered < 300 {
			t.Errorf("memory answered %d of 900 questions; most should not need the store", answered)
		}
	})
}

// TestConcurrentWritersAgree writes from many goroutines at once, so that
// group commit batches several transactions (some failing, rolled back
// to their savepoints alone) and PostgreSQL commits them in any order,
// and hands them to the memory in any order; the memory must still end
// as the store does.
func TestConcurrentWritersAgree(t *testing.T) {
	eachMemory(t, func(t *testing.T, db *sqldb.DB, own bool) {
		w := newWorld(t, db, 4, own)
		workers := make([]*world, 8)
		var wg sync.WaitGroup
		for i := range workers {
			c := &world{t: t, db: db, mem: w.mem, owned: own, r: rand.New(rand.NewPCG(uint64(i), 9)), fleets: w.fleets, seq: 1000 * (i + 1)}
			workers[i] = c
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 25 {
					c.step()
				}
			}()
		}
		wg.Wait()
		for _, c := range workers {
			w.ids = append(w.ids, c.ids...)
		}
		if t.Failed() {
			return
		}
		w.checkAll(20)
		w.checkReload()
	})
}

// checkReload builds a second memory from the store, as at start-up, and
// checks that it answers as the fed one does.
func (w *world) checkReload() {
	w.t.Helper()
	again := live.New()
	if err := again.Load(func(visit func(store.Change) error) error { return w.db.LoadLive(context.Background(), visit) }); err != nil {
		w.t.Fatal(err)
	}
	if again.Len() != w.mem.Len() {
		w.t.Fatalf("loaded %d live sessions, fed %d", again.Len(), w.mem.Len())
	}
	for _, fl := range w.fleets {
		for _, status := range []string{"", game.SessionActive} {
			f := store.SessionFilter{FleetID: fl, Status: status}
			a, an, aok, aerr := again.List(f, store.Page{Limit: 1000})
			b, bn, bok, berr := w.mem.List(f, store.Page{Limit: 1000})
			if aok != bok {
				w.t.Fatalf("describe %+v: loaded memory answers %v, fed memory %v", f, aok, bok)
			}
			same(w.t, "reload", a, b, an, bn, aerr, berr)
		}
	}
}

// TestTokensAndErrors checks the answers that are not sessions: tokens
// from another query, malformed tokens, unknown fleets.
func TestTokensAndErrors(t *testing.T) {
	eachMemory(t, func(t *testing.T, db *sqldb.DB, own bool) {
		w := newWorld(t, db, 2, own)
		for range 40 {
			w.step()
		}
		q := store.SearchQuery{FleetID: w.fleets[0]}
		other := store.SearchQuery{FleetID: w.fleets[1]}
		_, tok, _, _ := w.mem.Search(other, store.Page{Limit: 1})
		for _, token := range []string{"garbage", "e30", tok} {
			ml, mn, ok, merr := w.mem.Search(q, store.Page{Limit: 1, Token: token})
			sl, sn, serr := w.sqlSearch(q, store.Page{Limit: 1, Token: token})
			if !ok {
				t.Fatal("memory did not answer a known fleet")
			}
			same(t, "token "+token, ml, sl, mn, sn, merr, serr)
		}
		if _, _, ok, _ := w.mem.Search(store.SearchQuery{FleetID: "fleet-unknown"}, store.Page{}); ok {
			t.Error("memory answered for a fleet the store does not have")
		}
		if _, _, ok, _ := w.mem.List(store.SessionFilter{FleetID: "fleet-unknown"}, store.Page{}); ok {
			t.Error("memory answered a describe for a fleet the store does not have")
		}
		w.update(func(tx store.Tx) error { return tx.DeleteFleet(w.fleets[1]) })
		if _, _, ok, _ := w.mem.Search(other, store.Page{}); ok {
			t.Error("memory answered for a deleted fleet")
		}
	})
}

// FuzzSearchAgrees holds memory and store to the same answers for any
// filter and sort expression the parser accepts, over random sessions.
func FuzzSearchAgrees(f *testing.F) {
	for _, s := range []struct {
		filter, sort string
		limit        uint8
	}{
		{"gameSessionProperties.mode = 'ffa' AND hasAvailablePlayerSessions = true", "creationTimeMillis DESC", 2},
		{"NOT gameSessionProperties.z <> '' OR playerSessionCount >= 1", "gameSessionProperties.mode ASC", 3},
		{"maximumSessions > 2", "hasAvailablePlayerSessions DESC", 1},
		{"gameSessionName = 'alpha'", "gameSessionId ASC", 5},
		{"", "playerSessionCount ASC", 4},
	} {
		f.Add(s.filter, s.sort, s.limit)
	}
	db, err := sqlite.Open(context.Background(), f.TempDir(), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	w := newWorld(f, db, 3, false)
	for range 60 {
		w.step()
	}
	f.Fuzz(func(t *testing.T, filter, sort string, limit uint8) {
		q := store.SearchQuery{FleetID: w.fleets[0]}
		if filter != "" {
			e, err := search.ParseFilter(filter)
			if err != nil {
				return
			}
			q.Filter = e
		}
		if sort != "" {
			s, err := search.ParseSort(sort)
			if err != nil {
				return
			}
			q.Sort = &s
		}
		w.t = t
		if !w.checkSearch(q, int(limit%8)) {
			t.Fatal("memory did not answer a known fleet")
		}
	})
}

// checkMetrics checks that every fleet's metrics are the same with the
// live sessions counted in memory as grouped in SQL.
func (w *world) checkMetrics() {
	w.t.Helper()
	if w.db.Dialect() != "sqlite" && !w.owned {
		return // the memory counts for one server on SQLite, or the fleets a node owns
	}
	measure := func() string {
		var out []game.FleetMetrics
		err := w.db.View(context.Background(), func(tx store.Tx) error {
			for _, id := range w.fleets {
				f, err := tx.GetFleet(id)
				if err != nil {
					return err
				}
				ms, err := tx.FleetMetrics(f, epoch, epoch.Add(time.Minute))
				if err != nil {
					return err
				}
				out = append(out, ms...)
			}
			return nil
		})
		if err != nil {
			w.t.Fatal(err)
		}
		return fmt.Sprintf("%+v", out)
	}
	want := measure()
	w.db.SetLiveSessionCounts(w.mem)
	got := measure()
	w.db.SetLiveSessionCounts(nil)
	if got != want {
		w.t.Fatalf("fleet metrics with live sessions counted in memory:\n got %s\nwant %s", got, want)
	}
}
