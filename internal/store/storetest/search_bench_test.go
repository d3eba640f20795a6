package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// benchSessions is how many ACTIVE sessions the search benchmarks hold in
// one fleet (ANYLIFT_BENCH_SESSIONS overrides it).
func benchSessions() int {
	if n, err := strconv.Atoi(os.Getenv("ANYLIFT_BENCH_SESSIONS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// BenchmarkSearchGameSessions measures store-level searches over one
// fleet of benchSessions ACTIVE sessions (plus a tenth as many ended
// ones), each with a "mode" property of 4 values and a "map" of 1,000,
// holding 0 to 8 of 8 players. It reports ns/op and the p99 in ms.
func BenchmarkSearchGameSessions(b *testing.B) {
	cases := []struct{ name, filter, sort string }{
		{name: "no-filter"},
		{name: "selective-property", filter: `gameSessionProperties.map = 'map-0042' AND hasAvailablePlayerSessions = true`, sort: "creationTimeMillis DESC"},
		{name: "common-property-by-players", filter: `gameSessionProperties.mode = 'ffa' AND hasAvailablePlayerSessions = true`, sort: "playerSessionCount DESC"},
		{name: "open-by-creation", filter: `hasAvailablePlayerSessions = true`, sort: "creationTimeMillis ASC"},
		{name: "sort-players", sort: "playerSessionCount DESC"},
		{name: "sort-property", sort: "gameSessionProperties.map ASC"},
	}
	benchEach(b, func(b *testing.B, st store.Store, analyze func()) {
		seedBench(b, st, benchSessions())
		analyze()
		for _, c := range cases {
			q := benchQuery(b, c.filter, c.sort)
			b.Run(c.name, func(b *testing.B) { benchSearch(b, st, q) })
		}
	})
}

func benchQuery(b *testing.B, filter, sort string) store.SearchQuery {
	q := store.SearchQuery{FleetID: "fleet-bench"}
	if filter != "" {
		e, err := search.ParseFilter(filter)
		if err != nil {
			b.Fatal(err)
		}
		q.Filter = e
	}
	if sort != "" {
		s, err := search.ParseSort(sort)
		if err != nil {
			b.Fatal(err)
		}
		q.Sort = &s
	}
	return q
}

// benchSearch runs q for a first page of 20 and reports the p99.
func benchSearch(b *testing.B, st store.Store, q store.SearchQuery) {
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		err := st.View(ctx, func(tx store.Tx) error {
			list, _, err := tx.SearchGameSessions(q, store.Page{Limit: 20})
			if err == nil && len(list) == 0 {
				err = fmt.Errorf("no results")
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
}

// benchEach runs fn on a fresh store of every backend. analyze updates
// PostgreSQL's planner statistics and visibility map (VACUUM ANALYZE), as
// autovacuum would in production; on SQLite, which gathers none unless
// asked, it does nothing.
func benchEach(b *testing.B, fn func(b *testing.B, st store.Store, analyze func())) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(context.Background(), b.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fn(b, st, func() {})
	})
	dsn := storetestenv.PostgresDSN(b)
	if dsn == "" {
		return
	}
	b.Run("postgres", func(b *testing.B) {
		pgDSN := storetestenv.FreshSchema(b, dsn)
		st, err := postgres.Open(context.Background(), pgDSN)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fn(b, st, func() {
			db, err := sql.Open("pgx", pgDSN)
			if err == nil {
				_, err = db.Exec("VACUUM ANALYZE")
				db.Close()
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	})
}

// seedBench inserts n ACTIVE sessions and n/10 ended ones, 5,000 per
// transaction.
func seedBench(b *testing.B, st store.Store, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	modes := []string{"ffa", "team", "duel", "coop"}
	epoch := time.UnixMilli(1767225600000).UTC()
	total := n + n/10
	for start := 0; start < total; start += 5000 {
		err := st.Update(context.Background(), func(tx store.Tx) error {
			for i := start; i < min(start+5000, total); i++ {
				id := fmt.Sprintf("gsess-%07d", i)
				s := &game.GameSession{ID: sessionARN("fleet-bench", id), IDString: id, Name: id, FleetID: "fleet-bench",
					Location: "custom-bench", CreationTime: epoch.Add(time.Duration(i) * time.Millisecond * 10),
					Status: game.SessionActive, MaximumPlayerSessionCount: 8, CurrentPlayerSessionCount: rng.IntN(9),
					PlayerSessionCreationPolicy: "ACCEPT_ALL", Properties: []game.Property{
						{Key: "mode", Value: modes[rng.IntN(len(modes))]},
						{Key: "map", Value: fmt.Sprintf("map-%04d", rng.IntN(1000))},
					}}
				if i%11 == 10 {
					s.Status = game.SessionTerminated
				}
				if err := tx.InsertGameSession(s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
