package live_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/live"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// BenchmarkBytesPerSession reports the heap the memory holds per live
// session: 100,000 ACTIVE sessions of one fleet shaped as internal/bench
// seeds them (two properties, mode and map), each record built with its
// own copies of every string, as decoding it from the store makes them.
// Then the same once every session's answer has been read, and so kept,
// in JSON (warm-json), and in CBOR too (warm-both); then once searches
// sorted by name and by a property have run (sorted, and index: what
// that added).
//
//	go test ./internal/live -run '^$' -bench BytesPerSession -benchtime 1x
func BenchmarkBytesPerSession(b *testing.B) {
	const n = 100_000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		mem := live.New()
		fleet := "fleet-" + game.NewUUID()
		mem.Apply([]store.Change{{Kind: store.FleetPut, ID: fleet}})
		now := time.Now().UTC()
		batch := make([]store.Change, 0, 1000)
		for j := range n {
			idString := fmt.Sprintf("gsess-bench-%06d", j)
			s := &game.GameSession{
				ID:       "arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/custom-bench/" + idString,
				IDString: idString, Name: "game " + idString, FleetID: strings.Clone(fleet),
				FleetARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/" + fleet, Location: strings.Clone("custom-bench"),
				ComputeName: fmt.Sprintf("compute-%d", j%500), CreationTime: now.Add(time.Duration(j) * time.Millisecond),
				MaximumPlayerSessionCount: 200, Status: strings.Clone(game.SessionActive),
				PlayerSessionCreationPolicy: strings.Clone(game.AcceptAll), ProtectionPolicy: strings.Clone(game.NoProtection),
				IPAddress: strings.Clone("10.0.0.1"), Port: 7000 + j%1000,
				Properties: []game.Property{
					{Key: strings.Clone("mode"), Value: strings.Clone([]string{"ranked", "casual", "ffa", "ctf"}[j%4])},
					{Key: strings.Clone("map"), Value: fmt.Sprintf("map-%d", j/4%20)},
				},
			}
			batch = append(batch, store.Change{Kind: store.SessionPut, ID: s.ID, PK: int64(j + 1), Session: s})
			if len(batch) == cap(batch) {
				mem.Apply(batch)
				batch = batch[:0]
			}
		}
		mem.Apply(batch)
		batch = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		if mem.Len() != n {
			b.Fatalf("%d sessions held, want %d", mem.Len(), n)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/session")
		// With every session's answer kept, in one protocol and in both.
		for _, c := range []struct {
			p    wire.Protocol
			unit string
		}{{wire.JSON, "warm-json-bytes/session"}, {wire.CBOR, "warm-both-bytes/session"}} {
			warm(b, mem, fleet, c.p)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, c.unit)
		}
		// Then what the ordered index of a sort by name adds, once a search
		// so sorted has built it (a sort by a property adds nothing per
		// session: its value sets are read in value order).
		prev := after.HeapAlloc
		for _, src := range []string{"gameSessionName ASC", "gameSessionProperties.map DESC"} {
			srt, err := search.ParseSort(src)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, ok, err := mem.Search(store.SearchQuery{FleetID: fleet, Sort: &srt}, store.Page{Limit: 20}); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "sorted-bytes/session")
		b.ReportMetric((float64(after.HeapAlloc)-float64(prev))/n, "index-bytes/session")
		runtime.KeepAlive(mem)
	}
}

// warm reads every live session of fleet in protocol p, so that each
// keeps its answer.
func warm(b *testing.B, mem *live.Sessions, fleet string, p wire.Protocol) {
	pg := store.Page{Limit: 1000}
	for {
		_, next, ok, err := mem.ListEncoded(store.SessionFilter{FleetID: fleet, Status: game.SessionActive}, pg, p, sessions.EncodeGameSession)
		if !ok || err != nil {
			b.Fatal(ok, err)
		}
		if next == "" {
			return
		}
		pg.Token = next
	}
}
