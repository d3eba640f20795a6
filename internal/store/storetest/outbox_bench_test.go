package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/storetestenv"
)

// BenchmarkOutboxAppend measures transactions that each append one
// notification, 16 at a time, on PostgreSQL: what one lock held by every
// appender until its commit would serialize.
//
//	ANYLIFT_TEST_POSTGRES=... go test ./internal/store/storetest -run '^$' -bench OutboxAppend -benchtime 5000x
func BenchmarkOutboxAppend(b *testing.B) {
	dsn := storetestenv.PostgresDSN(b)
	if dsn == "" {
		b.Skip("ANYLIFT_TEST_POSTGRES is not set")
	}
	st, err := postgres.Open(context.Background(), storetestenv.FreshSchema(b, dsn))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	t0 := time.UnixMilli(1767225600000).UTC()
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("b-%d", n.Add(1))
			err := st.Update(context.Background(), func(tx store.Tx) error {
				return tx.AppendNotification(&game.Notification{ID: id, Time: t0, Type: "x", Resource: "r", Envelope: []byte("{}")})
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}
