package ownedtest

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/owned"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// Check fails unless Agree.
func Check(t testing.TB, db *sqldb.DB, mem *owned.Memory, fleet string) {
	t.Helper()
	if err := Agree(db, mem, fleet); err != nil {
		t.Fatal(err)
	}
}

// CheckQuiet waits until Agree, for a store that others (a node's timers)
// may still write: a comparison made while one of their commits is
// between the store and the memory fails, and is made again.
func CheckQuiet(t testing.TB, db *sqldb.DB, mem *owned.Memory, fleet string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := Agree(db, mem, fleet)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Agree returns an error unless mem, which must answer for fleet, answers
// what the store does: every describe of the fleet and of each session,
// searches, the live counts of the fleet metrics, the free processes and
// the record of each process.
func Agree(db *sqldb.DB, mem *owned.Memory, fleet string) error {
	l, fs := mem.Sessions(), mem.Processes()
	var stored []*game.GameSession
	var procs []*game.Process
	counts := map[[2]string][3]int64{}
	err := db.View(context.Background(), func(tx store.Tx) error {
		var err error
		if stored, _, err = tx.ListGameSessions(store.SessionFilter{FleetID: fleet}, store.Page{Limit: 1000}); err != nil {
			return err
		}
		procs, _, err = tx.ListProcesses(fleet, "", store.Page{Limit: 1000})
		return err
	})
	if err != nil {
		return err
	}
	for _, status := range []string{game.SessionActive, game.SessionActivating} {
		if err := sameList(db, l, store.SessionFilter{FleetID: fleet, Status: status}, 3); err != nil {
			return err
		}
	}
	for _, s := range stored {
		if !s.Live() {
			continue
		}
		if err := sameList(db, l, store.SessionFilter{ID: s.ID}, 0); err != nil {
			return err
		}
		k := [2]string{s.Location, s.ComputeName}
		c := counts[k]
		switch s.Status {
		case game.SessionActivating:
			c[0]++
		case game.SessionActive:
			c[1]++
		}
		c[2] += int64(s.CurrentPlayerSessionCount)
		counts[k] = c
	}
	got := map[[2]string][3]int64{}
	if !l.CountLive(fleet, func(loc, compute string, activating, active, players int64) {
		got[[2]string{loc, compute}] = [3]int64{activating, active, players}
	}) {
		return fmt.Errorf("fleet %s: the memory does not count its live sessions", fleet)
	}
	if !reflect.DeepEqual(got, counts) {
		return fmt.Errorf("fleet %s: live counts from memory %v, from the store %v", fleet, got, counts)
	}
	locations, computes := map[string]bool{}, map[string]bool{}
	for _, s := range stored {
		locations[s.Location], computes[s.ComputeName] = true, true
	}
	for _, p := range procs {
		locations[p.Location], computes[p.ComputeName] = true, true
	}
	if err := sameSearch(db, l, store.SearchQuery{FleetID: fleet}, 2); err != nil {
		return err
	}
	for loc := range locations {
		if err := sameSearch(db, l, store.SearchQuery{FleetID: fleet, Location: loc}, 2); err != nil {
			return err
		}
	}
	free := map[string][]string{}
	slices.SortFunc(procs, func(a, b *game.Process) int { // the claim order
		return cmp.Or(cmp.Compare(store.Millis(a.CreationTime), store.Millis(b.CreationTime)),
			cmp.Compare(a.PID, b.PID), cmp.Compare(a.ComputeName, b.ComputeName))
	})
	for _, p := range procs {
		if p.Free() {
			free[p.Location] = append(free[p.Location], p.ComputeName+"/"+p.PID)
		}
		got, ok := fs.Get(fleet, p.ComputeName, p.PID)
		if p.Status == game.ProcessTerminated {
			if ok {
				return fmt.Errorf("fleet %s: process %s ended, memory holds it", fleet, p.PID)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, p) {
			return fmt.Errorf("fleet %s: process %s from memory %+v (%v), from the store %+v", fleet, p.PID, got, ok, p)
		}
	}
	for loc := range locations {
		if got := fs.Free(fleet, loc); !slices.Equal(got, free[loc]) {
			return fmt.Errorf("fleet %s: free processes in %s in memory %v, in the store %v", fleet, loc, got, free[loc])
		}
	}
	activating := map[string]int{}
	for _, s := range stored {
		if s.Status == game.SessionActivating {
			activating[s.ComputeName]++
		}
	}
	for compute := range computes {
		if got := fs.Activating(fleet, compute); got != activating[compute] {
			return fmt.Errorf("fleet %s: %d sessions ACTIVATING on %s in memory, %d in the store", fleet, got, compute, activating[compute])
		}
	}
	return nil
}

// sameList pages through a describe in memory and in the store.
func sameList(db *sqldb.DB, l *live.Sessions, f store.SessionFilter, limit int) error {
	return samePages(db, fmt.Sprintf("describe %+v", f), limit,
		func(p store.Page) ([]*game.GameSession, string, bool, error) { return l.List(f, p) },
		func(tx store.Tx, p store.Page) ([]*game.GameSession, string, error) { return tx.ListGameSessions(f, p) })
}

// sameSearch pages through a search in memory and in the store.
func sameSearch(db *sqldb.DB, l *live.Sessions, q store.SearchQuery, limit int) error {
	return samePages(db, fmt.Sprintf("search %+v", q), limit,
		func(p store.Page) ([]*game.GameSession, string, bool, error) { return l.Search(q, p) },
		func(tx store.Tx, p store.Page) ([]*game.GameSession, string, error) {
			return tx.SearchGameSessions(q, p)
		})
}

// samePages pages through one question, named what, asked of the memory
// (mem) and of the store (stored), and compares every page.
func samePages(db *sqldb.DB, what string, limit int, mem func(store.Page) ([]*game.GameSession, string, bool, error),
	stored func(store.Tx, store.Page) ([]*game.GameSession, string, error)) error {
	p := store.Page{Limit: limit}
	for page := 0; page < 200; page++ {
		ml, mn, ok, merr := mem(p)
		var sl []*game.GameSession
		var sn string
		serr := db.View(context.Background(), func(tx store.Tx) error {
			var err error
			sl, sn, err = stored(tx, p)
			return err
		})
		if !ok {
			return fmt.Errorf("%s: not answered from memory; the store answers %s, %v", what, ids(sl), serr)
		}
		if err := same(fmt.Sprintf("%s page %d", what, page), ml, sl, mn, sn, merr, serr); err != nil {
			return err
		}
		if mn == "" {
			return nil
		}
		p.Token = mn
	}
	return nil
}

func same(what string, got, want []*game.GameSession, gotNext, wantNext string, gotErr, wantErr error) error {
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotNext != wantNext || len(got) != len(want) {
		return fmt.Errorf("%s: memory %d sessions, token %q, error %v; store %d, %q, %v", what, len(got), gotNext, gotErr, len(want), wantNext, wantErr)
	}
	for i := range got {
		g, w := Norm(got[i]), Norm(want[i])
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("%s: session %d differs:\nmemory %+v\nstore  %+v", what, i, g, w)
		}
	}
	return nil
}

// Norm is s as the wire sees it: times in milliseconds, no properties
// as nil.
func Norm(s *game.GameSession) game.GameSession {
	c := *s
	c.CreationTime = store.FromMillis(store.Millis(c.CreationTime))
	c.TerminationTime = store.FromMillis(store.Millis(c.TerminationTime))
	if len(c.Properties) == 0 {
		c.Properties = nil
	}
	return c
}

// ids lists sessions as the store answers them, briefly.
func ids(list []*game.GameSession) string {
	out := ""
	for _, s := range list {
		out += fmt.Sprintf(" %s (%s, %d seats)", s.IDString, s.Status, s.CurrentPlayerSessionCount)
	}
	return "[" + out + " ]"
}
