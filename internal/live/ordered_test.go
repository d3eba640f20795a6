package live

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// TestOrderedPlansAgree holds the walks in a sort's order (ordered
// indexes and property value lists, built by a first search and kept by
// every change after) to the bounded heap over every candidate, which
// the store agreement tests check: on a fleet large enough that the
// indexes' chunks split and empty, with seat counts, properties and
// sessions changing between searches.
func TestOrderedPlansAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	mem := New()
	const fleet = "fleet-o"
	mem.Apply([]store.Change{{Kind: store.FleetPut, ID: fleet}})
	epoch := time.UnixMilli(1767225600000).UTC()
	put := func(j int) {
		max := 1 + r.IntN(5)
		var props []game.Property
		if r.IntN(4) > 0 {
			props = append(props, game.Property{Key: "map", Value: fmt.Sprintf("m%d", r.IntN(30))})
		}
		s := &game.GameSession{
			ID: fmt.Sprintf("gs-%05d", j), IDString: fmt.Sprintf("gs-%05d", j), Name: fmt.Sprintf("n%d", r.IntN(50)),
			FleetID: fleet, Location: "custom-a", CreationTime: epoch.Add(time.Duration(r.IntN(200)) * time.Millisecond),
			MaximumPlayerSessionCount: max, CurrentPlayerSessionCount: r.IntN(max + 1),
			Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll, Properties: props,
		}
		if r.IntN(10) == 0 {
			s.Status = game.SessionActivating
		}
		mem.Apply([]store.Change{{Kind: store.SessionPut, ID: s.ID, PK: int64(j + 1), Session: s}})
	}
	const n = 3000
	for j := range n {
		put(j)
	}
	sorts := []string{"gameSessionId", "gameSessionName", "gameSessionProperties.map", "gameSessionProperties.none",
		"maximumSessions", "playerSessionCount", "hasAvailablePlayerSessions", "creationTimeMillis"}
	filters := []string{"", "hasAvailablePlayerSessions = true", "gameSessionProperties.map = 'm7'",
		"gameSessionProperties.map <> 'm7'", "maximumSessions >= 3 AND maximumSessions < 5",
		"playerSessionCount > 1 AND playerSessionCount <= 3", "playerSessionCount = 0 OR gameSessionName = 'n3'",
		fmt.Sprintf("creationTimeMillis >= %d AND creationTimeMillis < %d", store.Millis(epoch)+50, store.Millis(epoch)+120),
		"NOT gameSessionProperties.map = 'm3' AND maximumSessions <> 2"}
	pages := func(q store.SearchQuery, limit int, plan int32) []string {
		forcePlan.Store(plan)
		defer forcePlan.Store(planChoose)
		var out []string
		p := store.Page{Limit: limit}
		for {
			list, next, ok, err := mem.Search(q, p)
			if !ok || err != nil {
				t.Fatal(ok, err)
			}
			for _, s := range list {
				out = append(out, s.ID)
			}
			out = append(out, "|"+next)
			if next == "" {
				return out
			}
			p.Token = next
		}
	}
	for round := range 6 {
		for _, src := range sorts {
			for _, dir := range []string{" ASC", " DESC"} {
				srt, err := search.ParseSort(src + dir)
				if err != nil {
					t.Fatal(err)
				}
				filter := filters[r.IntN(len(filters))]
				q := store.SearchQuery{FleetID: fleet, Sort: &srt}
				if filter != "" {
					if q.Filter, err = search.ParseFilter(filter); err != nil {
						t.Fatal(err)
					}
				}
				limit := 1 + r.IntN(300)
				heap := pages(q, limit, planHeap)
				for _, plan := range []int32{planWalk, planChoose} {
					got := pages(q, limit, plan)
					for i := range max(len(got), len(heap)) {
						if i >= len(got) || i >= len(heap) || got[i] != heap[i] {
							t.Fatalf("round %d sort %s filter %q limit %d plan %d: differs from the heap's at %d (of %d, %d)",
								round, srt, filter, limit, plan, i, len(got), len(heap))
						}
					}
				}
			}
		}
		// Change a third of the sessions: seats, puts (new values, names,
		// statuses), ends; and add new ones.
		for range n / 3 {
			id := fmt.Sprintf("gs-%05d", r.IntN(n))
			switch r.IntN(3) {
			case 0:
				mem.Apply([]store.Change{{Kind: store.SessionSeats, ID: id, Seats: r.IntN(6)}})
			case 1:
				var j int
				fmt.Sscanf(id, "gs-%05d", &j)
				put(j)
			default:
				if e := mem.byID[id]; e != nil {
					s := *e.s
					s.Status = game.SessionTerminated
					mem.Apply([]store.Change{{Kind: store.SessionPut, ID: id, PK: e.pk, Session: &s}})
				}
			}
		}
	}
}
