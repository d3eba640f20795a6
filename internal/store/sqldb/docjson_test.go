package sqldb

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
)

// TestEncodeDocsAsJSON: encodePlacement and encodeSession write
// json.Marshal's bytes, and fail where it fails, for random values whose
// strings, floats and times take each path (plain or handed to
// encoding/json).
func TestEncodeDocsAsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	same := func(i int, v any, got []byte, err error) {
		t.Helper()
		want, wantErr := json.Marshal(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("value %d: error %v, json.Marshal's %v\n%#v", i, err, wantErr, v)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d:\n got %s\nwant %s", i, got, want)
		}
	}
	for i := range 20000 {
		p := randomPlacement(r)
		got, err := encodePlacement(p)
		same(i, p, got, err)
		s := randomSession(r)
		got, err = encodeSession(s)
		same(i, s, got, err)
	}
}

// TestAsStoredAsJSON: asStored gives what a JSON round trip gives, for
// random times of every kind (its shortcut and the rest).
func TestAsStoredAsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 100000 {
		tm := randomDocTime(r)
		want := tm
		if b, err := tm.MarshalJSON(); err == nil {
			want = time.Time{}
			if err := want.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
		}
		got := asStored(tm)
		// Equal instants, written alike (zone, no monotonic reading);
		// equal values outright in UTC (another zone's *Location is
		// made anew by each decoding).
		if !got.Equal(want) || got.String() != want.String() || want.Location() == time.UTC && got != want {
			t.Fatalf("time %d: asStored(%v) = %#v, the round trip %#v", i, tm, got, want)
		}
	}
}

func randomSession(r *rand.Rand) *game.GameSession {
	str := func() string { return randomDocString(r) }
	s := &game.GameSession{ID: str(), IDString: str(), Name: str(), FleetID: str(), FleetARN: str(), Location: str(),
		ComputeName: str(), ProcessID: str(), CreationTime: randomDocTime(r), TerminationTime: randomDocTime(r),
		CurrentPlayerSessionCount: r.IntN(300) - 100, MaximumPlayerSessionCount: r.IntN(300) - 100, Status: str(), StatusReason: str(),
		IPAddress: str(), DNSName: str(), Port: r.IntN(70000) - 1000, PlayerSessionCreationPolicy: str(), ProtectionPolicy: str(),
		CreatorID: str(), GameSessionData: str(), MatchmakerData: str()}
	if n := r.IntN(4) - 1; n >= 0 {
		s.Properties = make([]game.Property, n)
		for i := range s.Properties {
			s.Properties[i] = game.Property{Key: str(), Value: str()}
		}
	}
	return s
}

func randomPlacement(r *rand.Rand) *game.Placement {
	str := func() string { return randomDocString(r) }
	p := &game.Placement{ID: str(), QueueName: str(), QueueARN: str(), Status: str(), MaxPlayers: r.IntN(400) - 200,
		GameSessionName: str(), GameSessionData: str(), MatchmakerData: str(),
		StartTime: randomDocTime(r), EndTime: randomDocTime(r), Deadline: randomDocTime(r),
		GameSessionID: str(), GameSessionRegion: str(), FleetID: str(), IPAddress: str(), DNSName: str(), Port: r.IntN(70000) - 1000}
	if n := r.IntN(4) - 1; n >= 0 {
		p.Properties = make([]game.Property, n)
		for i := range p.Properties {
			p.Properties[i] = game.Property{Key: str(), Value: str()}
		}
	}
	if n := r.IntN(5) - 1; n >= 0 {
		p.Latencies = make([]game.PlayerLatency, n)
		for i := range p.Latencies {
			p.Latencies[i] = game.PlayerLatency{PlayerID: str(), Location: str(), LatencyMs: randomDocFloat(r)}
		}
	}
	if n := r.IntN(4) - 1; n >= 0 {
		p.DesiredPlayers = make([]game.DesiredPlayer, n)
		for i := range p.DesiredPlayers {
			p.DesiredPlayers[i] = game.DesiredPlayer{PlayerID: str(), PlayerData: str()}
		}
	}
	if n := r.IntN(4) - 1; n >= 0 {
		p.PlacedPlayers = make([]game.PlacedPlayer, n)
		for i := range p.PlacedPlayers {
			p.PlacedPlayers[i] = game.PlacedPlayer{PlayerID: str(), PlayerSessionID: str()}
		}
	}
	if r.IntN(3) == 0 {
		p.Override = &game.PriorityOverride{Fallback: str()}
		if n := r.IntN(4) - 1; n >= 0 {
			p.Override.LocationOrder = make([]string, n)
			for i := range p.Override.LocationOrder {
				p.Override.LocationOrder[i] = str()
			}
		}
	}
	return p
}

// randomDocString is mostly plain ASCII, as ids and names are, and
// sometimes holds what JSON escapes or replaces.
func randomDocString(r *rand.Rand) string {
	const plain = "abcXYZ019-_:/.@ ~{}[]"
	odd := []string{"\"", "\\", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x80", "😀"}
	var b []byte
	for range r.IntN(12) {
		if r.IntN(20) == 0 {
			b = append(b, odd[r.IntN(len(odd))]...)
		} else {
			b = append(b, plain[r.IntN(len(plain))])
		}
	}
	return string(b)
}

func randomDocFloat(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-6, 1e21, 9.999999e20, 1e-7, math.MaxFloat64,
			math.SmallestNonzeroFloat64}[r.IntN(11)]
	case 1:
		return math.Float64frombits(r.Uint64())
	case 2:
		return float64(r.IntN(500))
	default:
		return r.Float64() * math.Pow(10, float64(r.IntN(30)-10))
	}
}

func randomDocTime(r *rand.Rand) time.Time {
	switch r.IntN(8) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).UTC() // years before 0 and after 9999 too
	case 2:
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("", (r.IntN(48)-24)*1800))
	case 3:
		if r.IntN(2) == 0 {
			return time.Now() // local, with a monotonic reading
		}
		return time.Now().UTC() // the clock's, with a monotonic reading
	default:
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9)*int64(r.IntN(2))).UTC()
	}
}

func BenchmarkEncodeDocs(b *testing.B) {
	p := benchPlacement()
	s := &game.GameSession{ID: p.GameSessionID, IDString: "gsess-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b", FleetID: p.FleetID,
		FleetARN: "arn:aws:gamelift:us-west-2:123456789012:fleet/" + p.FleetID, Location: p.GameSessionRegion, ComputeName: "bench-compute-1",
		ProcessID: "proc-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b", CreationTime: p.StartTime, MaximumPlayerSessionCount: 10,
		Status: game.SessionActive, IPAddress: p.IPAddress, Port: p.Port, PlayerSessionCreationPolicy: "ACCEPT_ALL", ProtectionPolicy: "NoProtection"}
	for _, c := range []struct {
		name string
		enc  func() ([]byte, error)
	}{
		{"placement/json", func() ([]byte, error) { return json.Marshal(p) }},
		{"placement/encodePlacement", func() ([]byte, error) { return encodePlacement(p) }},
		{"session/json", func() ([]byte, error) { return json.Marshal(s) }},
		{"session/encodeSession", func() ([]byte, error) { return encodeSession(s) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.enc()
			}
		})
	}
}

// benchPlacement is a fulfilled placement as the queue placement
// benchmark makes: two players' latencies to three locations, one player.
func benchPlacement() *game.Placement {
	now := time.Now().UTC()
	p := &game.Placement{ID: "0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b", QueueName: "bench-queue-3",
		QueueARN: "arn:aws:gamelift:us-west-2:123456789012:gamesessionqueue/bench-queue-3", Status: game.PlacementFulfilled,
		MaxPlayers: 10, StartTime: now, EndTime: now.Add(40 * time.Millisecond), Deadline: now.Add(time.Minute),
		DesiredPlayers:    []game.DesiredPlayer{{PlayerID: "player-1"}},
		GameSessionID:     "arn:aws:gamelift:us-west-2::gamesession/fleet-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b/gsess-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b",
		GameSessionRegion: "custom-bench-a", FleetID: "fleet-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b", IPAddress: "127.0.0.1", Port: 41234,
		PlacedPlayers: []game.PlacedPlayer{{PlayerID: "player-1", PlayerSessionID: "psess-0a6b4a1e-5f3c-4c39-9a0f-1c2d3e4f5a6b"}}}
	for _, pl := range []string{"player-1", "player-2"} {
		for i, loc := range []string{"custom-bench-a", "custom-bench-b", "custom-bench-c"} {
			p.Latencies = append(p.Latencies, game.PlayerLatency{PlayerID: pl, Location: loc, LatencyMs: float64(20 + 15*i)})
		}
	}
	return p
}
