package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqldb"
)

func TestOutbox(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		t0 := time.UnixMilli(1767225600000).UTC()
		var seqs []int64
		for i := range 3 {
			n := &game.Notification{ID: fmt.Sprintf("n-%d", i), Time: t0.Add(time.Duration(i) * time.Minute),
				Type: "PlacementFulfilled", Resource: "arn:q", Target: "http://x", Envelope: []byte(`{"i":` + fmt.Sprint(i) + `}`)}
			Update(t, st, func(tx store.Tx) error { return tx.AppendNotification(n) })
			seqs = append(seqs, n.Seq)
		}
		if !(seqs[0] > 0 && seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
			t.Fatalf("seqs %v, want increasing from 1", seqs)
		}
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(seqs[0], 10)
			if err != nil {
				return err
			}
			if len(list) != 2 || list[0].ID != "n-1" || list[1].ID != "n-2" || string(list[1].Envelope) != `{"i":2}` ||
				!list[0].Time.Equal(t0.Add(time.Minute)) || list[0].Target != "http://x" || list[0].Seq != seqs[1] {
				t.Errorf("after first: %+v", list)
			}
			last, err := tx.LastNotificationSeq()
			if err != nil || last != seqs[2] {
				t.Errorf("last %d %v, want %d", last, err, seqs[2])
			}
			return nil
		})
		err := st.Update(context.Background(), func(tx store.Tx) error {
			return tx.AppendNotification(&game.Notification{ID: "n-0", Time: t0, Type: "x", Resource: "r", Envelope: []byte("{}")})
		})
		if !game.IsKind(err, game.Conflict) {
			t.Errorf("duplicate id: %v, want Conflict", err)
		}
		Update(t, st, func(tx store.Tx) error {
			n, err := tx.DeleteNotificationsBefore(t0.Add(90 * time.Second))
			if err == nil && n != 2 {
				t.Errorf("deleted %d, want 2", n)
			}
			return err
		})
		// Concurrent appends: every seq is distinct and a reader never
		// sees a gap that fills in later.
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					_ = st.Update(context.Background(), func(tx store.Tx) error {
						return tx.AppendNotification(&game.Notification{ID: fmt.Sprintf("c-%d-%d", w, i), Time: t0,
							Type: "x", Resource: "r", Envelope: []byte("{}")})
					})
				}
			}()
		}
		wg.Wait()
		View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(seqs[2], 100)
			if err == nil && len(list) != 40 {
				t.Errorf("%d concurrent notifications, want 40", len(list))
			}
			return err
		})
	})
}

// A notification committed late, behind one with a higher seq, is never
// skipped by a reader: the reader stops below the seq still in flight
// until its transaction ends, committed or rolled back; and appends in
// flight do not wait for each other. PostgreSQL only: SQLite has one
// writer, so a later append cannot commit before an earlier one.
func TestOutboxLateCommitIsNotSkipped(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		if d, ok := st.(*sqldb.DB); !ok || d.Dialect() != "postgres" || d.Grouped() {
			t.Skip("one writer: appends commit in seq order")
		}
		ctx := context.Background()
		t0 := time.UnixMilli(1767225600000).UTC()
		note := func(id string) *game.Notification {
			return &game.Notification{ID: id, Time: t0, Type: "x", Resource: "r", Envelope: []byte("{}")}
		}
		list := func(after int64) []string {
			var ids []string
			View(t, st, func(tx store.Tx) error {
				page, err := tx.ListNotifications(after, 100)
				for _, n := range page {
					ids = append(ids, n.ID)
				}
				return err
			})
			return ids
		}
		for _, end := range []string{"commit", "rollback"} {
			t.Run(end, func(t *testing.T) {
				var start int64
				View(t, st, func(tx store.Tx) (err error) { start, err = tx.LastNotificationSeq(); return err })
				appended, release, done := make(chan int64), make(chan struct{}), make(chan error)
				go func() {
					done <- st.Update(ctx, func(tx store.Tx) error {
						n := note("early-" + end)
						if err := tx.AppendNotification(n); err != nil {
							return err
						}
						appended <- n.Seq
						<-release
						if end == "rollback" {
							return game.Errorf(game.InvalidRequest, "rolled back on purpose")
						}
						return nil
					})
				}()
				early := <-appended
				late := note("late-" + end)
				// Appends in flight do not wait for each other: this one
				// commits while the early one is still open.
				Update(t, st, func(tx store.Tx) error { return tx.AppendNotification(late) })
				if late.Seq <= early {
					t.Fatalf("late seq %d, early %d", late.Seq, early)
				}
				if got := list(start); len(got) != 0 {
					t.Fatalf("read %v while seq %d is in flight, want nothing past it", got, early)
				}
				close(release)
				err := <-done
				want := []string{"early-" + end, "late-" + end}
				if end == "rollback" {
					if !game.IsKind(err, game.InvalidRequest) {
						t.Fatalf("rolled back: %v", err)
					}
					want = want[1:]
				} else if err != nil {
					t.Fatal(err)
				}
				if got := list(start); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("after the early transaction's %s: %v, want %v", end, got, want)
				}
			})
		}
		// Many appenders holding their transactions open for a while, and
		// a tailer reading all along: it sees every committed notification
		// exactly once, in seq order.
		var from int64
		View(t, st, func(tx store.Tx) (err error) { from, err = tx.LastNotificationSeq(); return err })
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 15 {
					err := st.Update(ctx, func(tx store.Tx) error {
						if err := tx.AppendNotification(note(fmt.Sprintf("s-%d-%d", w, i))); err != nil {
							return err
						}
						// A second statement after the append keeps the
						// transaction open across a round trip.
						_, err := tx.ListNotifications(0, 1)
						if i%5 == 4 && err == nil {
							return game.Errorf(game.InvalidRequest, "rolled back on purpose")
						}
						return err
					})
					if (i%5 == 4) != game.IsKind(err, game.InvalidRequest) || err != nil && !game.IsKind(err, game.InvalidRequest) {
						t.Errorf("append %d-%d: %v", w, i, err)
					}
				}
			}()
		}
		stop := make(chan struct{})
		tailed := make(chan []int64)
		go func() {
			var seqs []int64
			pos := from
			for {
				select {
				case <-stop:
					tailed <- seqs
					return
				default:
				}
				_ = st.View(ctx, func(tx store.Tx) error {
					page, err := tx.ListNotifications(pos, 7)
					for _, n := range page {
						seqs = append(seqs, n.Seq)
						pos = n.Seq
					}
					return err
				})
			}
		}()
		wg.Wait()
		// Let the tailer catch up: once every appender has ended, one more
		// pass of the tailer reaches the end.
		var all []int64
		View(t, st, func(tx store.Tx) error {
			end, err := tx.LastNotificationSeq()
			if err != nil {
				return err
			}
			page, err := tx.ListNotifications(from, 1000)
			for _, n := range page {
				if n.Seq <= end {
					all = append(all, n.Seq)
				}
			}
			return err
		})
		close(stop)
		seqs := <-tailed
		// The tailer may not have read the last pages yet; what it read
		// must be a prefix of everything, in order, with nothing skipped.
		if len(all) != 6*12 {
			t.Fatalf("%d notifications committed, want %d", len(all), 6*12)
		}
		if len(seqs) > len(all) || fmt.Sprint(seqs) != fmt.Sprint(all[:len(seqs)]) {
			t.Fatalf("tailer read %v\nwant a prefix of %v", seqs, all)
		}
	})
}

// A transaction that appended and then reads the outbox (the webhook
// deliverer's, say, or a job of the same grouped batch) must not settle
// the horizon past its own seqs, which are not committed yet: a reader
// elsewhere would read the later seqs of others and skip its own when
// they commit. PostgreSQL only.
func TestOutboxReadInsideAnAppenderSettlesNotItsOwnSeqs(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		if d, ok := st.(*sqldb.DB); !ok || d.Dialect() != "postgres" || d.Grouped() {
			t.Skip("one writer, or one transaction at a time")
		}
		ctx := context.Background()
		note := func(id string) *game.Notification {
			return &game.Notification{ID: id, Time: time.UnixMilli(1767225600000).UTC(), Type: "x", Resource: "r", Envelope: []byte("{}")}
		}
		var start int64
		View(t, st, func(tx store.Tx) (err error) { start, err = tx.LastNotificationSeq(); return err })
		appended, laterDone, read, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			done <- st.Update(ctx, func(tx store.Tx) error {
				if err := tx.AppendNotification(note("own")); err != nil {
					return err
				}
				close(appended)
				<-laterDone
				// Read with the own seq in flight, and a later one committed.
				_, err := tx.ListNotifications(start, 100)
				close(read)
				<-release
				return err
			})
		}()
		<-appended
		Update(t, st, func(tx store.Tx) error { return tx.AppendNotification(note("later")) })
		close(laterDone)
		<-read
		var got []string
		View(t, st, func(tx store.Tx) error {
			page, err := tx.ListNotifications(start, 100)
			for _, n := range page {
				got = append(got, n.ID)
			}
			return err
		})
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Fatalf("a reader read %v while the seq before them was in flight, and would skip it", got)
		}
	})
}
