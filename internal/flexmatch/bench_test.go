package flexmatch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/wire"
)

// BenchmarkMatchmakingEndToEnd, streaming, submits 10,000 solo tickets
// (StartMatchmaking, 8 concurrent callers, skills uniform 0–100) to a
// STANDALONE configuration on a SQLite store while the matchmaker steps
// back to back, and reports tickets matched per second of wall time (first
// submission to last completion) and p50/p99 of EndTime − StartTime, both
// on the wall clock. Waiting submits the 10,000 tickets first (untimed)
// and then times the steps that match them all: tickets matched per
// second of matchmaker wall time, and p50/p99 from the first step to each
// ticket's completion. Run with -benchtime 1x.
func BenchmarkMatchmakingEndToEnd(b *testing.B) {
	for _, c := range []struct{ name, rules string }{{"1v1-skill", duelRules}, {"5v5-expansions", benchFiveVsFive(b)}} {
		b.Run(c.name+"/streaming", func(b *testing.B) {
			for range b.N {
				benchMatchmaking(b, c.rules, 10000, false)
			}
		})
		b.Run(c.name+"/waiting", func(b *testing.B) {
			for range b.N {
				benchMatchmaking(b, c.rules, 10000, true)
			}
		})
	}
}

// benchFiveVsFive is the matcher benchmarks' 5v5 rule set: fair-team and
// skill-spread distance rules and two expansion steps.
func benchFiveVsFive(b *testing.B) string {
	body, err := os.ReadFile("../matchmaking/testdata/five_vs_five_expansions.json")
	if err != nil {
		b.Fatal(err)
	}
	return string(body)
}

func benchMatchmaking(b *testing.B, rules string, n int, waiting bool) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := newNode(st, control.Config{Account: game.Account{Region: "us-west-2", ID: "123456789012"}}, nil)
	if _, err := s.CreateMatchmakingRuleSet(ctx, &wire.CreateMatchmakingRuleSetInput{Name: wire.String("r"), RuleSetBody: wire.String(rules)}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateMatchmakingConfiguration(ctx, &wire.CreateMatchmakingConfigurationInput{Name: wire.String("cfg"), RuleSetName: wire.String("r"),
		RequestTimeoutSeconds: wire.Int32(600), AcceptanceRequired: wire.Bool(false), FlexMatchMode: wire.String(game.FlexMatchStandalone)}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var submitted atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := w; i < n; i += 8 {
				_, err := s.StartMatchmaking(ctx, &wire.StartMatchmakingInput{TicketId: wire.String(fmt.Sprint("t", i)), ConfigurationName: wire.String("cfg"),
					Players: []wire.Player{player(fmt.Sprint("p", i), float64(rng.Intn(1000))/10)}})
				if err != nil {
					b.Error(err)
					return
				}
				submitted.Add(1)
			}
		}()
	}
	if waiting {
		wg.Wait()
		start = time.Now()
	}
	b.ResetTimer()
	idle := 0
	for idle < 3 {
		before := submitted.Load()
		if err := s.StepMatchmaking(ctx); err != nil {
			b.Fatal(err)
		}
		if before == int64(n) {
			idle++ // every ticket is in: a few more passes for the stragglers
		}
	}
	wg.Wait()
	b.StopTimer()
	lat, last := completions(b, st, start, waiting)
	elapsed := last.Sub(start).Seconds()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat)), "matched")
	b.ReportMetric(float64(len(lat))/elapsed, "tickets/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
	}
}

// completions reads every COMPLETED ticket's EndTime − StartTime (or −
// start when fromStart) and the last EndTime.
func completions(b *testing.B, st store.Store, start time.Time, fromStart bool) ([]time.Duration, time.Time) {
	var lat []time.Duration
	var last time.Time
	err := st.View(context.Background(), func(tx store.Tx) error {
		after := ""
		for {
			list, err := tx.ListTickets("cfg", game.TicketCompleted, after, 1000)
			if err != nil {
				return err
			}
			for _, t := range list {
				from := t.StartTime
				if fromStart {
					from = start
				}
				lat = append(lat, t.EndTime.Sub(from))
				if t.EndTime.After(last) {
					last = t.EndTime
				}
			}
			if len(list) < 1000 {
				return nil
			}
			after = list[len(list)-1].ID
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	return lat, last
}
