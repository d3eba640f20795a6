//go:build unix

package sessions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// BenchmarkReserve takes one seat at a time in random sessions of 10,000
// (200 seats each) from 16 goroutines, without HTTP: decided in memory
// (what SQLite serves) and decided in SQL (the store path), on the same
// SQLite store with synchronous FULL, one after the other in one run.
// Besides the time per reservation it reports the process's CPU time per
// reservation, less sensitive to other work on a shared machine, and
// where the system tells (Linux) the bytes the process wrote per
// reservation: the write-ahead log's frames (one page each) and the
// checkpoints' copies of them, which the pages each write changes set.
//
//	go test ./internal/sessions -run '^$' -bench Reserve -benchtime 20000x
func BenchmarkReserve(b *testing.B) {
	const sessions = 10_000
	w := newSeatWorld(b)
	ctx := context.Background()
	var ids []string
	err := w.db.Update(ctx, func(tx store.Tx) error {
		for i := range sessions {
			gs := w.record(fmt.Sprintf("bench-%05d", i), game.SessionActive, game.AcceptAll, 200)
			if err := tx.InsertGameSession(gs); err != nil {
				return err
			}
			ids = append(ids, gs.ID)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"memory", "store"} {
		b.Run(path, func(b *testing.B) {
			b.SetParallelism(8)
			cpu0, w0 := processCPU(b), writtenBytes()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for pb.Next() {
					id, ps := ids[r.IntN(sessions)], w.players("p")
					var err error
					if path == "memory" {
						err = w.s.reserve(ctx, id, ps)
					} else {
						err = w.s.reserveInStore(ctx, id, ps)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			if w0 >= 0 {
				b.ReportMetric(float64(writtenBytes()-w0)/1024/float64(b.N), "written-KiB/op")
			}
		})
	}
}

// writtenBytes returns the bytes this process has passed to write
// system calls (Linux's /proc/self/io wchar), or -1 where unknown.
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
