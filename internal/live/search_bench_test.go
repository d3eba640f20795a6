package live_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// benchSessions fills a memory with n ACTIVE sessions of one fleet shaped
// as internal/bench seeds them: mode (4 values) and map (20 values), one
// session a millisecond from epoch; their seat limits vary (100 to 299)
// for the range shapes, every seat free.
func benchSessions(n int) (*live.Sessions, string) {
	mem := live.New()
	fleet := "fleet-bench"
	mem.Apply([]store.Change{{Kind: store.FleetPut, ID: fleet}})
	var batch []store.Change
	for j := range n {
		idString := fmt.Sprintf("gsess-bench-%06d", j)
		s := &game.GameSession{
			ID: "arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/custom-bench/" + idString, IDString: idString,
			Name: "game " + idString, FleetID: fleet, Location: "custom-bench", CreationTime: epoch.Add(time.Duration(j) * time.Millisecond),
			MaximumPlayerSessionCount: 100 + j%200, Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll,
			Properties: []game.Property{{Key: "mode", Value: []string{"ranked", "casual", "ffa", "ctf"}[j%4]}, {Key: "map", Value: fmt.Sprintf("map-%d", j/4%20)}},
		}
		batch = append(batch, store.Change{Kind: store.SessionPut, ID: s.ID, PK: int64(j + 1), Session: s})
	}
	mem.Apply(batch)
	return mem, fleet
}

func BenchmarkSearch(b *testing.B) {
	mem, fleet := benchSessions(100_000)
	for _, c := range []struct{ name, filter, sort string }{
		{"selective", "gameSessionProperties.map = 'map-7' AND gameSessionProperties.mode = 'ranked' AND hasAvailablePlayerSessions = true", ""},
		{"sorted", "hasAvailablePlayerSessions = true", "creationTimeMillis DESC"},
		{"by-name", "gameSessionProperties.mode = 'ffa'", "gameSessionName ASC"},
		{"by-name-all", "", "gameSessionName DESC"},
		{"by-id", "hasAvailablePlayerSessions = true", "gameSessionId ASC"},
		{"by-property", "gameSessionProperties.mode = 'ffa'", "gameSessionProperties.map ASC"},
		{"by-property-desc", "", "gameSessionProperties.map DESC"},
		{"by-max", "hasAvailablePlayerSessions = true", "maximumSessions DESC"},
		{"by-players", "", "playerSessionCount ASC"},
		{"range-max-by-name", "maximumSessions < 110", "gameSessionName ASC"},
		{"range-max", "maximumSessions >= 298", ""},
		{"range-created", fmt.Sprintf("creationTimeMillis >= %d", store.Millis(epoch)+99_000), ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := store.SearchQuery{FleetID: fleet}
			var err error
			if c.filter != "" {
				if q.Filter, err = search.ParseFilter(c.filter); err != nil {
					b.Fatal(err)
				}
			}
			if c.sort != "" {
				srt, err := search.ParseSort(c.sort)
				if err != nil {
					b.Fatal(err)
				}
				q.Sort = &srt
			}
			// The first search builds the ordered index it walks, if any:
			// reported apart (first-ns), the loop measures the searches after.
			start := time.Now()
			if _, _, ok, err := mem.Search(q, store.Page{Limit: 20}); !ok || err != nil {
				b.Fatal(ok, err)
			}
			first := time.Since(start)
			b.ReportAllocs()
			for b.Loop() {
				list, _, ok, err := mem.Search(q, store.Page{Limit: 20})
				if !ok || err != nil || len(list) != 20 {
					b.Fatal(len(list), ok, err)
				}
			}
			b.ReportMetric(float64(first.Nanoseconds()), "first-ns")
		})
	}
}
