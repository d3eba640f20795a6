package sqldb_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

// decoded is p as its stored JSON document decodes.
func decoded(t *testing.T, p *game.Placement) *game.Placement {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out game.Placement
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func testPlacement(id string) *game.Placement {
	now := time.Now()
	return &game.Placement{ID: id, QueueName: "q", QueueARN: "arn:q", Status: game.PlacementPending, MaxPlayers: 4,
		Properties: []game.Property{{Key: "k", Value: "v"}}, Latencies: []game.PlayerLatency{{PlayerID: "p1", Location: "custom-a", LatencyMs: 12.5}},
		DesiredPlayers: []game.DesiredPlayer{{PlayerID: "p1", PlayerData: "d<&>"}}, StartTime: now, Deadline: now.Add(time.Minute),
		Override: &game.PriorityOverride{LocationOrder: []string{"custom-a"}, Fallback: game.FallbackDefaultAfterSinglePass}}
}

// A placement read back, whoever wrote its row, is what decoding the
// row's document gives: the store's own writes (kept decoded), a write
// the store did not make (decoded again), and reads inside writes and
// in views alike, on both stores.
func TestPlacementReadBackAsDecoded(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			p := testPlacement("pl-1")
			w.update(func(tx store.Tx) error { return tx.InsertPlacement(p) })
			read := func() *game.Placement {
				t.Helper()
				var got *game.Placement
				w.update(func(tx store.Tx) error {
					var err error
					got, err = tx.GetPlacement("pl-1")
					return err
				})
				var viewed *game.Placement
				if err := w.db.View(t.Context(), func(tx store.Tx) error {
					var err error
					viewed, err = tx.GetPlacement("pl-1")
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, viewed) {
					t.Fatalf("write read %+v, view read %+v", got, viewed)
				}
				return got
			}
			if got, want := read(), decoded(t, p); !reflect.DeepEqual(got, want) {
				t.Fatalf("read back %+v, want %+v", got, want)
			}
			// What a reader gets is its own: changing it changes nothing kept.
			got := read()
			got.Latencies[0].PlayerID, got.Override.LocationOrder[0], got.Properties[0].Value = "x", "x", "x"
			if again := read(); !reflect.DeepEqual(again, decoded(t, p)) {
				t.Fatalf("a reader's change reached the next reader: %+v", again)
			}

			// Placed by the store, then read by the session's placement.
			p.GameSessionID, p.FleetID, p.Port = "gs-1", testFleet, 7777
			w.update(func(tx store.Tx) error { return tx.UpdatePlacement(p) })
			var bySession *game.Placement
			w.update(func(tx store.Tx) error {
				var err error
				bySession, err = tx.PlacementOfSession("gs-1")
				return err
			})
			if want := decoded(t, p); !reflect.DeepEqual(bySession, want) {
				t.Fatalf("placement of session %+v, want %+v", bySession, want)
			}

			// A write the store did not make (another node's) is read as written.
			if _, err := w.raw.Exec(`UPDATE placements SET doc = replace(doc, '"MaxPlayers":4', '"MaxPlayers":5')`); err != nil {
				t.Fatal(err)
			}
			want := decoded(t, p)
			want.MaxPlayers = 5
			if got := read(); !reflect.DeepEqual(got, want) {
				t.Fatalf("after another writer, read %+v, want %+v", got, want)
			}

			// A write that failed leaves the row, and what is read, as it was.
			errs := w.db.RunBatch(func(tx store.Tx) error {
				c := *p
				c.MaxPlayers = 9
				if err := tx.UpdatePlacement(&c); err != nil {
					return err
				}
				return game.Errorf(game.InvalidRequest, "no")
			})
			if errs[0] == nil {
				t.Fatal("the failing job succeeded")
			}
			if got := read(); !reflect.DeepEqual(got, want) {
				t.Fatalf("after a failed write, read %+v, want %+v", got, want)
			}
		})
	}
}

// FuzzStoredPlacement checks that the placement kept for a document
// written is the one decoding that document gives, or is not kept.
func FuzzStoredPlacement(f *testing.F) {
	f.Add("pl-1", "q", "v", "p1", 12.5, int64(1700000000123456789), "custom-a", true)
	f.Add("\xff", "", "\u2028<&>", "", 0.0, int64(0), "", false)
	f.Add("a\"b", "q\\", "\x00", "é", -1e300, int64(-1), "x\xc3", true)
	f.Fuzz(func(t *testing.T, id, queue, value, player string, ms float64, nanos int64, loc string, override bool) {
		p := &game.Placement{ID: id, QueueName: queue, Status: game.PlacementPending, Properties: []game.Property{{Key: value, Value: value}},
			Latencies: []game.PlayerLatency{{PlayerID: player, Location: loc, LatencyMs: ms}}, StartTime: time.Unix(0, nanos),
			Deadline: time.Unix(0, nanos).In(time.FixedZone("x", 3600)), DesiredPlayers: []game.DesiredPlayer{}}
		if override {
			p.Override = &game.PriorityOverride{LocationOrder: []string{loc}}
		}
		b, err := json.Marshal(p)
		if err != nil {
			return // not a placement the store could write either
		}
		var want game.Placement
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := sqldb.StoredPlacement(p)
		if ok && !reflect.DeepEqual(got, &want) {
			t.Fatalf("kept %+v, decoding gives %+v", got, &want)
		}
		if gotID, ok := sqldb.PlacementDocID(string(b)); ok && gotID != want.ID {
			t.Fatalf("id %q read from the document, decoding gives %q", gotID, want.ID)
		}
	})
}

// A compute read back is what decoding the document read gives, though
// the store keeps computes decoded: a change the store did not make is
// read as written wherever the rules read the row.
func TestComputeReadBackAsDecoded(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			w.update(func(tx store.Tx) error {
				return tx.InsertCompute(&game.Compute{FleetID: testFleet, Name: "c1", Location: "custom-a", Status: game.ComputeActive,
					IPAddress: "10.0.0.1", CreationTime: time.Now()})
			})
			view := func() string {
				t.Helper()
				var ip string
				if err := w.db.View(t.Context(), func(tx store.Tx) error {
					c, err := tx.GetCompute(testFleet, "c1")
					if err == nil {
						ip = c.IPAddress
						c.IPAddress = "changed by a reader"
					}
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return ip
			}
			if ip := view(); ip != "10.0.0.1" {
				t.Fatalf("read %s", ip)
			}
			if ip := view(); ip != "10.0.0.1" {
				t.Fatalf("a reader's change reached the next reader: %s", ip)
			}
			w.behindTheBack("10.0.0.1", "10.0.0.2")
			if ip := view(); ip != "10.0.0.2" {
				t.Fatalf("after another writer, read %s, want 10.0.0.2", ip)
			}
		})
	}
}

// A queue read back is what decoding its document gives, though the
// store keeps queues decoded: a change the store did not make is read as
// written, and a reader's change of what it read reaches nobody else.
func TestQueueReadBackAsDecoded(t *testing.T) {
	for name, open := range memWorlds(t) {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			w.update(func(tx store.Tx) error {
				return tx.InsertQueue(&game.Queue{Name: "q", ARN: "arn:q", TimeoutSeconds: 60, Destinations: []string{testFleet}, CreationTime: time.Now()})
			})
			read := func() *game.Queue {
				t.Helper()
				var q *game.Queue
				w.update(func(tx store.Tx) error {
					var err error
					q, err = tx.GetQueue("q")
					return err
				})
				return q
			}
			q := read()
			q.Destinations[0], q.TimeoutSeconds = "changed by a reader", 1
			if q := read(); q.Destinations[0] != testFleet || q.TimeoutSeconds != 60 {
				t.Fatalf("a reader's change reached the next reader: %+v", q)
			}
			if _, err := w.raw.Exec(`UPDATE game_session_queues SET doc = replace(doc, '"TimeoutSeconds":60', '"TimeoutSeconds":70')`); err != nil {
				t.Fatal(err)
			}
			if q := read(); q.TimeoutSeconds != 70 {
				t.Fatalf("after another writer, read %+v", q)
			}
		})
	}
}
