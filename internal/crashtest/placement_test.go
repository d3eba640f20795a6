package crashtest

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// A kill -9 while 4 callers create game sessions as fast as they can
// (each claiming a free process: on SQLite from the memory of free
// processes) leaves every acknowledged game session stored, hosted by the
// process that claimed it, and no process claiming a session that is not
// stored or that another process hosts. The restarted server lists the
// same game sessions.
func TestKill9KeepsEveryPlacedSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := binary(t)
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		kill9Placements(t, bin, dir, nil, func() (store.Store, error) { return sqlite.Open(context.Background(), dir, sqlite.Options{}) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetestenv.PostgresDSN(t)
		if dsn == "" {
			t.Skip("ANYLIFT_TEST_POSTGRES is not set")
		}
		schema := storetestenv.FreshSchema(t, dsn)
		kill9Placements(t, bin, t.TempDir(), []string{"--store", schema}, func() (store.Store, error) { return postgres.Open(context.Background(), schema) })
	})
	t.Run("postgres-owned", func(t *testing.T) {
		dsn := storetestenv.PostgresDSN(t)
		if dsn == "" {
			t.Skip("ANYLIFT_TEST_POSTGRES is not set")
		}
		schema := storetestenv.FreshSchema(t, dsn)
		kill9Placements(t, bin, t.TempDir(), ownedFlags(schema), func() (store.Store, error) { return postgres.Open(context.Background(), schema) })
	})
}

const (
	placementProcs  = 80 // free processes before the load
	killAtPlacement = 30 // game sessions acknowledged before the kill
)

func kill9Placements(t *testing.T, bin, dir string, storeArgs []string, open func() (store.Store, error)) {
	cmd, url := start(t, bin, dir, storeArgs...)
	gl := client(url)
	fleet := apitest.AnywhereFleet(t, gl, crashLocation, "crash")
	procs := newProcesses(t, gl, url, fleet, placementProcs)

	a := &acked{players: map[string]string{}}
	var (
		wg   sync.WaitGroup
		once sync.Once
	)
	for range 4 {
		wg.Go(func() {
			for {
				out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
					Location: aws.String(crashLocation), MaximumPlayerSessionCount: aws.Int32(seededSeats)})
				var full *types.FleetCapacityExceededException
				if errors.As(err, &full) {
					t.Errorf("no free process left before the kill: %v", err)
					return
				}
				if err != nil {
					return // the server is gone
				}
				a.mu.Lock()
				a.games = append(a.games, aws.ToString(out.GameSession.GameSessionId))
				due := len(a.games) >= killAtPlacement
				a.mu.Unlock()
				if due {
					once.Do(func() { cmd.Process.Kill() }) // SIGKILL, with other claims in flight
				}
			}
		})
	}
	wg.Wait()
	cmd.Wait()
	procs.destroy()
	t.Logf("acknowledged before the kill: %d game sessions", len(a.games))

	st, err := open()
	if err != nil {
		t.Fatal(err)
	}
	counts := checkStore(t, st, fleet, a)
	checkOneSessionPerProcess(t, st, fleet)
	st.Close()

	cmd2, url2 := start(t, bin, dir, storeArgs...)
	defer func() { cmd2.Process.Signal(os.Interrupt); cmd2.Wait() }()
	checkRestarted(t, client(url2), fleet, counts, nil)
}

// checkOneSessionPerProcess checks that no two stored game sessions name
// the same process.
func checkOneSessionPerProcess(t *testing.T, st store.Store, fleet string) {
	t.Helper()
	err := st.View(context.Background(), func(tx store.Tx) error {
		sessions, _, err := tx.ListGameSessions(store.SessionFilter{FleetID: fleet}, store.Page{Limit: 1000})
		if err != nil {
			return err
		}
		host := map[string]string{}
		for _, gs := range sessions {
			k := gs.ComputeName + "/" + gs.ProcessID
			if other, ok := host[k]; ok {
				t.Errorf("process %s hosts %s and %s", k, other, gs.ID)
			}
			host[k] = gs.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
