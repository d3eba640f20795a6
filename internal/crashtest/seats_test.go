package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/postgres"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
	sdk "github.com/anylift/anylift/sdk/server"
)

// A kill -9 while seats are being taken and game sessions created leaves,
// on SQLite and on PostgreSQL, every acknowledged player session and game
// session in place, every session's seat count equal to its RESERVED and
// ACTIVE player sessions and never above its maximum, and no half-written
// state: every game session hosted by the process that claimed it and
// every claimed process hosting a stored session. The restarted server
// answers the same counts (on SQLite, from the memory it rebuilt) and
// takes seats again within the maximum.
func TestKill9KeepsSeatsConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := binary(t)
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		kill9Seats(t, bin, dir, nil, func() (store.Store, error) { return sqlite.Open(context.Background(), dir, sqlite.Options{}) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetestenv.PostgresDSN(t)
		if dsn == "" {
			t.Skip("ANYLIFT_TEST_POSTGRES is not set")
		}
		schema := storetestenv.FreshSchema(t, dsn)
		kill9Seats(t, bin, t.TempDir(), []string{"--store", schema}, func() (store.Store, error) { return postgres.Open(context.Background(), schema) })
	})
	t.Run("postgres-owned", func(t *testing.T) {
		dsn := storetestenv.PostgresDSN(t)
		if dsn == "" {
			t.Skip("ANYLIFT_TEST_POSTGRES is not set")
		}
		schema := storetestenv.FreshSchema(t, dsn)
		kill9Seats(t, bin, t.TempDir(), ownedFlags(schema), func() (store.Store, error) { return postgres.Open(context.Background(), schema) })
	})
}

// The load of the kill -9 test.
const (
	crashLocation = "custom-crash"
	seededSeats   = 8  // seats of every game session
	seeded        = 10 // game sessions made ACTIVE before the load
	spare         = 40 // free processes the load creates game sessions on
	killAtSeats   = seeded * seededSeats / 2
	killAtGames   = 10
)

// acked is what the server acknowledged before it was killed.
type acked struct {
	mu      sync.Mutex
	players map[string]string // player session id → game session id
	games   []string          // game sessions created under load
	seats   int
}

func kill9Seats(t *testing.T, bin, dir string, storeArgs []string, open func() (store.Store, error)) {
	cmd, url := start(t, bin, dir, storeArgs...)
	gl := client(url)
	fleet := apitest.AnywhereFleet(t, gl, crashLocation, "crash")
	procs := newProcesses(t, gl, url, fleet, seeded+spare)
	var ids []string
	for range seeded {
		ids = append(ids, procs.createActive(t, gl, fleet))
	}

	a := &acked{players: map[string]string{}}
	var (
		wg   sync.WaitGroup
		once sync.Once
	)
	killed := make(chan struct{})
	kill := func() {
		a.mu.Lock()
		due := a.seats >= killAtSeats && len(a.games) >= killAtGames
		a.mu.Unlock()
		if due {
			once.Do(func() { cmd.Process.Kill(); close(killed) }) // SIGKILL, with other writes in flight
		}
	}
	alive := func() bool {
		select {
		case <-killed:
			return false
		default:
			return true
		}
	}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; alive(); i++ {
				id := ids[r.IntN(len(ids))]
				ps, err := reserve(gl, id, fmt.Sprintf("p-%d-%d", w, i), i%4 == 3)
				if err != nil && !refused(err) {
					return // the server is gone
				}
				a.mu.Lock()
				for _, p := range ps {
					a.players[aws.ToString(p.PlayerSessionId)] = id
				}
				a.seats += len(ps)
				a.mu.Unlock()
				kill()
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for alive() {
				out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
					Location: aws.String(crashLocation), MaximumPlayerSessionCount: aws.Int32(seededSeats)})
				if err != nil {
					var full *types.FleetCapacityExceededException
					if errors.As(err, &full) {
						kill() // no process left: the seats decide when to kill
						continue
					}
					return
				}
				a.mu.Lock()
				a.games = append(a.games, aws.ToString(out.GameSession.GameSessionId))
				a.mu.Unlock()
				kill()
			}
		}()
	}
	wg.Wait()
	cmd.Wait()
	procs.destroy()
	if a.seats < killAtSeats || len(a.games) < killAtGames {
		t.Fatalf("only %d seats and %d game sessions acknowledged before the kill", a.seats, len(a.games))
	}
	t.Logf("acknowledged before the kill: %d seats, %d game sessions", a.seats, len(a.games))

	st, err := open()
	if err != nil {
		t.Fatal(err)
	}
	counts := checkStore(t, st, fleet, a)
	st.Close()

	cmd2, url2 := start(t, bin, dir, storeArgs...)
	defer func() { cmd2.Process.Signal(os.Interrupt); cmd2.Wait() }()
	checkRestarted(t, client(url2), fleet, counts, ids)
}

// reserve takes one seat (CreatePlayerSession) or two
// (CreatePlayerSessions) in game session id for player.
func reserve(gl *gamelift.Client, id, player string, pair bool) ([]types.PlayerSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !pair {
		out, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String(player)})
		if err != nil {
			return nil, err
		}
		return []types.PlayerSession{*out.PlayerSession}, nil
	}
	out, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id),
		PlayerIds: []string{player + "-a", player + "-b"}})
	if err != nil {
		return nil, err
	}
	return out.PlayerSessions, nil
}

// refused reports the answer of a live server to a seat it cannot give.
func refused(err error) bool {
	var full *types.GameSessionFullException
	return errors.As(err, &full)
}

// checkStore checks the store as the kill left it, and returns each live
// game session's seat count.
func checkStore(t *testing.T, st store.Store, fleet string, a *acked) map[string]int {
	t.Helper()
	counts := map[string]int{}
	err := st.View(context.Background(), func(tx store.Tx) error {
		sessions, _, err := tx.ListGameSessions(store.SessionFilter{FleetID: fleet}, store.Page{Limit: 1000})
		if err != nil {
			return err
		}
		for _, gs := range sessions {
			counts[gs.ID] = gs.CurrentPlayerSessionCount
			list, _, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: gs.ID}, store.Page{Limit: 1000})
			if err != nil {
				return err
			}
			occupied := 0
			for _, p := range list {
				if p.Occupies() {
					occupied++
				}
				if p.Status != game.PlayerReserved {
					t.Errorf("player session %s is %s; nothing accepted or ended it", p.ID, p.Status)
				}
			}
			if gs.CurrentPlayerSessionCount != occupied || occupied > gs.MaximumPlayerSessionCount {
				t.Errorf("%s: count %d, occupied %d, max %d", gs.ID, gs.CurrentPlayerSessionCount, occupied, gs.MaximumPlayerSessionCount)
			}
			p, err := tx.GetProcess(fleet, gs.ComputeName, gs.ProcessID)
			if err != nil || p.GameSessionID != gs.ID {
				t.Errorf("game session %s: its process %s/%s hosts %+v, %v", gs.ID, gs.ComputeName, gs.ProcessID, p, err)
			}
		}
		procs, _, err := tx.ListProcesses(fleet, "", store.Page{Limit: 1000})
		if err != nil {
			return err
		}
		for _, p := range procs {
			if _, ok := counts[p.GameSessionID]; p.GameSessionID != "" && !ok {
				t.Errorf("process %s claims game session %s, which is not stored", p.PID, p.GameSessionID)
			}
		}
		for _, id := range a.games {
			if _, ok := counts[id]; !ok {
				t.Errorf("acknowledged game session %s is missing", id)
			}
		}
		for psID, gsID := range a.players {
			p, err := tx.GetPlayerSession(psID)
			if err != nil {
				t.Errorf("acknowledged player session %s: %v", psID, err)
			} else if p.GameSessionID != gsID || p.Status != game.PlayerReserved {
				t.Errorf("acknowledged player session %s is %s in %s, want RESERVED in %s", psID, p.Status, p.GameSessionID, gsID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// checkRestarted checks that the restarted server answers the stored
// seat counts and still never over-books: it fills the seeded sessions.
func checkRestarted(t *testing.T, gl *gamelift.Client, fleet string, counts map[string]int, ids []string) {
	t.Helper()
	ctx := context.Background()
	seen := 0
	p := gamelift.NewDescribeGameSessionsPaginator(gl, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(fleet)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, gs := range page.GameSessions {
			id := aws.ToString(gs.GameSessionId)
			if want, ok := counts[id]; !ok || int(aws.ToInt32(gs.CurrentPlayerSessionCount)) != want {
				t.Errorf("after restart %s counts %d seats, the store %d (stored: %v)", id, aws.ToInt32(gs.CurrentPlayerSessionCount), want, ok)
			}
			seen++
		}
	}
	if seen != len(counts) {
		t.Errorf("after restart %d game sessions are listed, %d are stored", seen, len(counts))
	}
	for _, id := range ids {
		taken := counts[id]
		for i := 0; ; i++ {
			_, err := reserve(gl, id, fmt.Sprint("after-", i), false)
			if err != nil {
				if !refused(err) {
					t.Fatal(err)
				}
				break
			}
			taken++
		}
		if taken != seededSeats {
			t.Errorf("%s: %d seats taken after the restart filled it, want %d", id, taken, seededSeats)
		}
	}
}

// client is the AWS SDK's GameLift client for the server at url.
func client(url string) *gamelift.Client {
	return (&apitest.Env{URL: url}).Client()
}

// processes are server processes of the Go server SDK, connected and
// ready, each activating the game session it is given.
type processes struct {
	mu     sync.Mutex
	all    []*sdk.Process
	active chan string // game sessions activated
}

// newProcesses connects n processes to the server at url, on two computes
// of the fleet.
func newProcesses(t *testing.T, gl *gamelift.Client, url, fleet string, n int) *processes {
	t.Helper()
	ps := &processes{active: make(chan string, n)}
	t.Cleanup(ps.destroy)
	var tokens []string
	for c := range 2 {
		tokens = append(tokens, apitest.RegisterCompute(t, gl, fleet, crashLocation, fmt.Sprint("host-", c), fmt.Sprintf("10.0.0.%d", c+1)))
	}
	for i := range n {
		p, err := sdk.Init(sdk.ServerParameters{WebSocketURL: "ws" + strings.TrimPrefix(url, "http"), ProcessID: fmt.Sprint("proc-", i),
			HostID: fmt.Sprint("host-", i%2), FleetID: fleet, AuthToken: tokens[i%2]}, sdk.Options{
			Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1,
			HealthCheckInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		ps.mu.Lock()
		ps.all = append(ps.all, p)
		ps.mu.Unlock()
		err = p.ProcessReady(sdk.ProcessParameters{Port: 7000 + i, OnStartGameSession: func(gs sdk.GameSession) {
			if p.ActivateGameSession() == nil {
				ps.active <- gs.GameSessionID
			}
		}, OnProcessTerminate: func() {}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// createActive creates a game session and waits for its process to
// activate it.
func (ps *processes) createActive(t *testing.T, gl *gamelift.Client, fleet string) string {
	t.Helper()
	out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String(crashLocation), MaximumPlayerSessionCount: aws.Int32(seededSeats)})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.GameSession.GameSessionId)
	for {
		select {
		case got := <-ps.active:
			if got == id {
				return id
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("game session %s was not activated", id)
		}
	}
}

// destroy ends every process's connection; it may run twice.
func (ps *processes) destroy() {
	ps.mu.Lock()
	all := ps.all
	ps.all = nil
	ps.mu.Unlock()
	for _, p := range all {
		p.Destroy()
	}
}
