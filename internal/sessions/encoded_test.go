package sessions

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/owned/ownedtest"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/store/storetest"
	"github.com/anylift/anylift/internal/storetestenv"
	"github.com/anylift/anylift/internal/wire"
)

// The answers written from memory, sessions already encoded, must be the
// bytes of the ordinary answers: the store's sessions, shaped and encoded
// per request. Two services share one store; one answers from memory.

var encEpoch = time.UnixMilli(1767225600000).UTC()

// encWorld is a store, a memory fed by it, a service answering from the
// memory and one answering from the store alone.
type encWorld struct {
	t          testing.TB
	db         *sqldb.DB
	fromMemory *Service
	fromStore  *Service
	mem        *countingLive
	r          *rand.Rand
	fleets     []*game.Fleet
	ids        []string
	seq        int
}

// countingLive counts the answers the memory gave.
type countingLive struct {
	*live.Sessions
	answered int
}

func (c *countingLive) SearchEncoded(q store.SearchQuery, p store.Page, proto wire.Protocol, enc SessionEncoder) (wire.EncodedList[wire.GameSession], string, bool, error) {
	list, next, ok, err := c.Sessions.SearchEncoded(q, p, proto, enc)
	if ok {
		c.answered++
	}
	return list, next, ok, err
}

func (c *countingLive) ListEncoded(f store.SessionFilter, p store.Page, proto wire.Protocol, enc SessionEncoder) (wire.EncodedList[wire.GameSession], string, bool, error) {
	list, next, ok, err := c.Sessions.ListEncoded(f, p, proto, enc)
	if ok {
		c.answered++
	}
	return list, next, ok, err
}

// newEncWorld returns a world on db; own: the memory is that of the
// fleets a node owns on PostgreSQL (internal/owned), which owns them all.
func newEncWorld(t testing.TB, db *sqldb.DB, seed uint64, own bool) *encWorld {
	now := func() time.Time { return encEpoch.Add(time.Hour) }
	w := &encWorld{t: t, db: db, fromMemory: newService(db, now), fromStore: newService(db, now),
		mem: &countingLive{Sessions: live.New()}, r: rand.New(rand.NewPCG(seed, 11))}
	var mem *owned.Memory
	if own {
		mem = ownedtest.Start(t, db, w.mem.Sessions)
	} else {
		db.SetCommitHook(w.mem.Apply)
	}
	w.fromMemory.SetLive(w.mem)
	w.update(func(tx store.Tx) error {
		for i := range 2 {
			f := &game.Fleet{ID: fmt.Sprintf("fleet-%d", i), ARN: testAccount.FleetARN(fmt.Sprintf("fleet-%d", i)),
				Status: game.FleetActive, CreationTime: encEpoch, Locations: []string{"custom-a", "custom-b"}}
			if err := tx.InsertFleet(f); err != nil {
				return err
			}
			w.fleets = append(w.fleets, f)
		}
		return nil
	})
	if own {
		ownedtest.WaitLoaded(t, mem, w.fleets[0].ID, w.fleets[1].ID)
	}
	return w
}

func (w *encWorld) update(fn func(store.Tx) error) {
	w.t.Helper()
	if err := w.db.Update(context.Background(), fn); err != nil {
		w.t.Fatal(err)
	}
}

func encPick[T any](r *rand.Rand, list ...T) T { return list[r.IntN(len(list))] }

// encStrings are values the encoders treat specially (escaped in JSON,
// non-ASCII, long enough for a wider CBOR head), and plain ones.
var encStrings = []string{"", "alpha", "Matt's <game> & \"friends\"", "tab\tline\nend\\", "\u2028\u2029 ✓ é",
	string(bytes.Repeat([]byte("x"), 24)), string(bytes.Repeat([]byte("y"), 300))}

// newSession returns a random session, live or ended.
func (w *encWorld) newSession() *game.GameSession {
	w.seq++
	f := encPick(w.r, w.fleets...)
	loc := encPick(w.r, "custom-a", "custom-b")
	idString := fmt.Sprintf("gsess-%04d", w.seq)
	max := 1 + w.r.IntN(4)
	s := &game.GameSession{
		ID: game.Account{Region: "us-west-2"}.GameSessionARN(f.ID, loc, idString), IDString: idString,
		Name: encPick(w.r, encStrings...), FleetID: f.ID, FleetARN: f.ARN, Location: loc, ComputeName: encPick(w.r, "c1", "c2", ""),
		CreationTime:              encEpoch.Add(time.Duration(w.r.IntN(4000)) * time.Millisecond),
		MaximumPlayerSessionCount: max, CurrentPlayerSessionCount: w.r.IntN(max + 1),
		Status:                      encPick(w.r, game.SessionActive, game.SessionActive, game.SessionActivating, game.SessionTerminating, game.SessionTerminated),
		StatusReason:                encPick(w.r, "", "", game.ReasonInterrupted),
		PlayerSessionCreationPolicy: encPick(w.r, game.AcceptAll, game.DenyAll),
		IPAddress:                   encPick(w.r, "10.0.0.1", ""), DNSName: encPick(w.r, "", "host.example"), Port: encPick(w.r, 0, 7000+w.seq),
		CreatorID: encPick(w.r, "", "player-1"), GameSessionData: encPick(w.r, encStrings...), MatchmakerData: encPick(w.r, "", `{"matchId":"m"}`),
		Properties: w.props(),
	}
	if !s.Live() {
		s.TerminationTime = s.CreationTime.Add(time.Duration(w.r.IntN(5000)) * time.Millisecond)
	}
	return s
}

func (w *encWorld) props() []game.Property {
	var out []game.Property
	for range w.r.IntN(4) {
		out = append(out, game.Property{Key: encPick(w.r, "mode", "map", "a.b"), Value: encPick(w.r, encStrings...)})
	}
	return out
}

// step makes one random write: a new session, a change, players joining
// (the seat count), a session ending.
func (w *encWorld) step() {
	w.update(func(tx store.Tx) error {
		if len(w.ids) == 0 || w.r.IntN(3) == 0 {
			s := w.newSession()
			w.ids = append(w.ids, s.ID)
			return tx.InsertGameSession(s)
		}
		s, err := tx.GetGameSession(encPick(w.r, w.ids...))
		if err != nil {
			return err
		}
		switch w.r.IntN(4) {
		case 0:
			s.Name, s.Properties = encPick(w.r, encStrings...), w.props()
			s.Status = encPick(w.r, game.SessionActive, game.SessionActivating, game.SessionTerminating)
			return tx.UpdateGameSession(s)
		case 1, 2:
			ps := []*game.PlayerSession{{ID: game.NewPlayerSessionID(), PlayerID: "p", CreationTime: encEpoch, Status: game.PlayerReserved}}
			err := tx.ReserveSeats(s.ID, ps, encEpoch)
			if game.IsKind(err, game.GameSessionFull) || game.IsKind(err, game.InvalidGameSessionStatus) {
				return nil
			}
			return err
		}
		if err := tx.EndPlayerSessions(s.ID, encEpoch.Add(time.Minute)); err != nil {
			return err
		}
		s.Status, s.TerminationTime, s.CurrentPlayerSessionCount = game.SessionTerminated, encEpoch.Add(time.Minute), 0
		return tx.UpdateGameSession(s)
	})
}

// answer encodes an operation's output, or its error, in protocol p.
func answer(p wire.Protocol, out any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := wire.Encode(p, out)
	if err != nil {
		return "encoding error: " + err.Error()
	}
	if p == wire.CBOR {
		return hex.EncodeToString(b)
	}
	return string(b)
}

// checkDescribe pages through a describe in both protocols and fails
// unless the memory's answers (encoded and not) are the store's.
func (w *encWorld) checkDescribe(in wire.DescribeGameSessionsInput) {
	w.t.Helper()
	ctx := context.Background()
	for page := 0; page < 50; page++ {
		var next *string
		for _, p := range []wire.Protocol{wire.JSON, wire.CBOR} {
			want, err := w.fromStore.DescribeGameSessions(ctx, &in)
			wantS := answer(p, want, err)
			enc, encErr := w.fromMemory.DescribeGameSessionsEncoded(ctx, &in, p)
			if got := answer(p, enc, encErr); got != wantS {
				w.t.Fatalf("describe %s, %v, page %d: from memory\n%s\nfrom the store\n%s", describeIn(in), p, page, got, wantS)
			}
			shapes, shapesErr := w.fromMemory.DescribeGameSessions(ctx, &in)
			if got := answer(p, shapes, shapesErr); got != wantS {
				w.t.Fatalf("describe %s, %v, page %d: shapes from memory\n%s\nfrom the store\n%s", describeIn(in), p, page, got, wantS)
			}
			if err == nil {
				next = want.NextToken
			}
		}
		if next == nil {
			return
		}
		in.NextToken = next
	}
}

// checkSearch is checkDescribe for a search.
func (w *encWorld) checkSearch(in wire.SearchGameSessionsInput) {
	w.t.Helper()
	ctx := context.Background()
	for page := 0; page < 50; page++ {
		var next *string
		for _, p := range []wire.Protocol{wire.JSON, wire.CBOR} {
			want, err := w.fromStore.SearchGameSessions(ctx, &in)
			wantS := answer(p, want, err)
			enc, encErr := w.fromMemory.SearchGameSessionsEncoded(ctx, &in, p)
			if got := answer(p, enc, encErr); got != wantS {
				w.t.Fatalf("search %s, %v, page %d: from memory\n%s\nfrom the store\n%s", searchIn(in), p, page, got, wantS)
			}
			shapes, shapesErr := w.fromMemory.SearchGameSessions(ctx, &in)
			if got := answer(p, shapes, shapesErr); got != wantS {
				w.t.Fatalf("search %s, %v, page %d: shapes from memory\n%s\nfrom the store\n%s", searchIn(in), p, page, got, wantS)
			}
			if err == nil {
				next = want.NextToken
			}
		}
		if next == nil {
			return
		}
		in.NextToken = next
	}
}

func describeIn(in wire.DescribeGameSessionsInput) string {
	return fmt.Sprintf("fleet %q session %q status %q location %q limit %d", wire.Deref(in.FleetId), wire.Deref(in.GameSessionId),
		wire.Deref(in.StatusFilter), wire.Deref(in.Location), wire.Deref(in.Limit))
}

func searchIn(in wire.SearchGameSessionsInput) string {
	return fmt.Sprintf("fleet %q location %q filter %q sort %q limit %d", wire.Deref(in.FleetId), wire.Deref(in.Location),
		wire.Deref(in.FilterExpression), wire.Deref(in.SortExpression), wire.Deref(in.Limit))
}

// fleetName names a fleet by id or by ARN.
func (w *encWorld) fleetName() *string {
	f := encPick(w.r, w.fleets...)
	return wire.String(encPick(w.r, f.ID, f.ARN))
}

// ask asks one random describe and one random search.
func (w *encWorld) ask() {
	d := wire.DescribeGameSessionsInput{FleetId: w.fleetName()}
	switch w.r.IntN(4) {
	case 0:
		d = wire.DescribeGameSessionsInput{GameSessionId: wire.String(encPick(w.r, w.ids...))}
	case 1:
		d.StatusFilter = wire.String(encPick(w.r, game.SessionActive, game.SessionActivating, game.SessionTerminating, game.SessionTerminated))
	}
	if w.r.IntN(3) == 0 {
		d.Location = wire.String(encPick(w.r, "custom-a", "custom-b"))
	}
	if w.r.IntN(2) == 0 {
		d.Limit = wire.Int32(1 + w.r.IntN(5))
	}
	w.checkDescribe(d)
	s := wire.SearchGameSessionsInput{FleetId: w.fleetName(),
		FilterExpression: wire.String(encPick(w.r, "", "hasAvailablePlayerSessions = true", "gameSessionProperties.mode = 'alpha'",
			"playerSessionCount >= 1 OR gameSessionName = 'alpha'")),
		SortExpression: wire.String(encPick(w.r, "", "creationTimeMillis DESC", "playerSessionCount ASC", "gameSessionName DESC"))}
	if w.r.IntN(3) == 0 {
		s.Location = wire.String(encPick(w.r, "custom-a", "custom-b"))
	}
	if w.r.IntN(2) == 0 {
		s.Limit = wire.Int32(1 + w.r.IntN(5))
	}
	w.checkSearch(s)
}

// TestEncodedAnswersAreTheStoresAnswers writes random sessions (odd
// strings, ended ones, seat counts changing after their answers were
// kept) and asks random describes and searches, paging through, in both
// protocols.
func TestEncodedAnswersAreTheStoresAnswers(t *testing.T) {
	run := func(t *testing.T, db *sqldb.DB, own bool) {
		w := newEncWorld(t, db, 1, own)
		for range 40 {
			for range 5 {
				w.step()
			}
			for range 5 {
				w.ask()
			}
		}
		t.Logf("memory answered %d pages", w.mem.answered)
		if w.mem.answered < 200 {
			t.Errorf("memory answered %d pages; most should not need the store", w.mem.answered)
		}
	}
	storetest.EachDB(t, func(t *testing.T, db *sqldb.DB) { run(t, db, false) })
	if storetestenv.PostgresDSN(t) != "" {
		t.Run("postgres-owned", func(t *testing.T) { run(t, storetest.Postgres(t), true) })
	}
}

// FuzzEncodedAnswers holds the answers from memory to the store's for
// any strings a session carries and any seat count.
func FuzzEncodedAnswers(f *testing.F) {
	f.Add("game", "mode", "ffa", "data", uint8(1), uint8(4))
	f.Add("<&>", "", "\u2028", "\"quoted\"", uint8(0), uint8(0))
	f.Add("é✓", "map", string(bytes.Repeat([]byte("v"), 300)), "", uint8(9), uint8(200))
	db, err := sqlite.Open(context.Background(), f.TempDir(), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	w := newEncWorld(f, db, 2, false)
	f.Fuzz(func(t *testing.T, name, key, value, data string, seats, max uint8) {
		if !utf8.ValidString(name + key + value + data) {
			return // the API refuses such strings before any session has them
		}
		w.t = t
		s := w.newSession()
		s.Name, s.GameSessionData, s.Status = name, data, game.SessionActive
		s.Properties = []game.Property{{Key: key, Value: value}}
		s.MaximumPlayerSessionCount, s.CurrentPlayerSessionCount = int(max), min(int(seats), int(max))
		w.ids = append(w.ids, s.ID)
		w.update(func(tx store.Tx) error { return tx.InsertGameSession(s) })
		w.checkDescribe(wire.DescribeGameSessionsInput{GameSessionId: &s.ID})
		w.checkDescribe(wire.DescribeGameSessionsInput{FleetId: &s.FleetID, StatusFilter: wire.String(game.SessionActive)})
		w.checkSearch(wire.SearchGameSessionsInput{FleetId: &s.FleetID, SortExpression: wire.String("creationTimeMillis DESC")})
	})
}
