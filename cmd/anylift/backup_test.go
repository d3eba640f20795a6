package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// A backup taken with "anylift backup" while a real server takes writes
// from several clients, restored with "anylift restore" and opened by a
// new server, holds every write acknowledged before the backup began; the
// restored store passes integrity_check, and every game session's seat
// count equals its player sessions holding a seat.
func TestBackupUnderLoadRestores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const sessions, seats = 8, 60
	fleetID, ids := storetestenv.SeedActiveSessions(t, dir, game.Account{Region: apitest.Region, ID: "123456789012"}, "custom-backup", sessions, seats)
	env := apitest.Start(t, func(c *server.Config) { c.DataDir = dir })
	gl := env.Client()

	var (
		mu          sync.Mutex
		players     []string // acknowledged player session ids
		aliases     []string // acknowledged alias ids
		backupBegan = -1     // len(players)+len(aliases) when the backup began
		before      struct{ players, aliases int }
		afterAcks   int
	)
	stop := make(chan struct{})
	tookBackup := make(chan struct{})
	// reached closes once 150 writes are acknowledged: the backup is then
	// taken while the writers go on.
	reached := make(chan struct{})
	var reachedOnce sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%3 == 2 {
					out, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{
						Name:            aws.String(fmt.Sprintf("alias-%d-%d", w, i)),
						RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fleetID)},
					})
					if err != nil {
						t.Errorf("CreateAlias: %v", err)
						return
					}
					mu.Lock()
					aliases = append(aliases, aws.ToString(out.Alias.AliasId))
					mu.Unlock()
				} else {
					out, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{
						GameSessionId: aws.String(ids[(w+i)%sessions]), PlayerId: aws.String(fmt.Sprintf("p-%d-%d", w, i)),
					})
					var full *types.GameSessionFullException
					if errors.As(err, &full) {
						continue
					}
					if err != nil {
						t.Errorf("CreatePlayerSession: %v", err)
						return
					}
					mu.Lock()
					players = append(players, aws.ToString(out.PlayerSession.PlayerSessionId))
					mu.Unlock()
				}
				mu.Lock()
				if backupBegan >= 0 {
					afterAcks++
				}
				enough := afterAcks >= 60
				if len(players)+len(aliases) >= 150 {
					reachedOnce.Do(func() { close(reached) })
				}
				mu.Unlock()
				select {
				case <-tookBackup:
					if enough {
						return
					}
				default:
				}
			}
		}(w)
	}

	<-reached
	file := filepath.Join(t.TempDir(), "anylift-backup.db")
	mu.Lock()
	backupBegan = len(players) + len(aliases)
	before.players, before.aliases = len(players), len(aliases)
	mu.Unlock()
	var out, errOut strings.Builder
	if err := run(ctx, []string{"backup", "--data-dir", dir, file}, noEnv, &out, &errOut); err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("backup: %v\n%s", err, errOut.String())
	}
	close(tookBackup)
	wg.Wait()
	close(stop)
	t.Logf("%s(%d player sessions and %d aliases acknowledged before the backup, %d writes during and after it)",
		out.String(), before.players, before.aliases, afterAcks)
	if !strings.HasPrefix(out.String(), "backup of "+dir+" written to "+file) {
		t.Fatalf("backup said %q", out.String())
	}
	if afterAcks == 0 {
		t.Fatal("no write was acknowledged during or after the backup: it was not taken under load")
	}

	// A second backup to the same name is refused; the file is untouched.
	if err := run(ctx, []string{"backup", "--data-dir", dir, file}, noEnv, &out, &errOut); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}

	newDir := filepath.Join(t.TempDir(), "restored")
	out.Reset()
	if err := run(ctx, []string{"restore", file, "--data-dir", newDir}, noEnv, &out, &errOut); err != nil {
		t.Fatalf("restore: %v", err)
	}
	t.Log(strings.TrimSpace(out.String()))
	// Restoring again over it is refused.
	if err := run(ctx, []string{"restore", file, "--data-dir", newDir}, noEnv, &out, &errOut); err == nil || !strings.Contains(err.Error(), "already holds a store") {
		t.Fatalf("restore over a store: %v", err)
	}
	integrityCheck(t, filepath.Join(newDir, sqlite.FileName))

	restored := apitest.Start(t, func(c *server.Config) { c.DataDir = newDir })
	rgl := restored.Client()
	mu.Lock()
	wantPlayers := append([]string(nil), players[:before.players]...)
	wantAliases := append([]string(nil), aliases[:before.aliases]...)
	mu.Unlock()

	have := map[string]bool{}
	occupied := map[string]int{}
	for _, id := range ids {
		var next *string
		for {
			page, err := rgl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id), Limit: aws.Int32(50), NextToken: next})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page.PlayerSessions {
				have[aws.ToString(p.PlayerSessionId)] = true
				if p.Status == types.PlayerSessionStatusReserved || p.Status == types.PlayerSessionStatusActive {
					occupied[id]++
				}
			}
			if next = page.NextToken; next == nil {
				break
			}
		}
	}
	for _, p := range wantPlayers {
		if !have[p] {
			t.Errorf("player session %s, acknowledged before the backup, is not in the restored store", p)
		}
	}
	gss, err := rgl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(fleetID), Limit: aws.Int32(sessions)})
	if err != nil || len(gss.GameSessions) != sessions {
		t.Fatalf("DescribeGameSessions: %d, %v", len(gss.GameSessions), err)
	}
	for _, gs := range gss.GameSessions {
		id := aws.ToString(gs.GameSessionId)
		if n := int(aws.ToInt32(gs.CurrentPlayerSessionCount)); n != occupied[id] || n > seats {
			t.Errorf("%s: seat count %d, player sessions holding a seat %d, seats %d", id, n, occupied[id], seats)
		}
	}
	haveAlias := map[string]bool{}
	var next *string
	for {
		page, err := rgl.ListAliases(ctx, &gamelift.ListAliasesInput{Limit: aws.Int32(100), NextToken: next})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Aliases {
			haveAlias[aws.ToString(a.AliasId)] = true
		}
		if next = page.NextToken; next == nil {
			break
		}
	}
	for _, a := range wantAliases {
		if !haveAlias[a] {
			t.Errorf("alias %s, acknowledged before the backup, is not in the restored store", a)
		}
	}
	t.Logf("restored: %d player sessions (%d acknowledged before the backup), %d aliases (%d before)", len(have), len(wantPlayers), len(haveAlias), len(wantAliases))
}

// integrityCheck runs SQLite's integrity_check on the database at path.
func integrityCheck(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of %s: %q, %v", path, res, err)
	}
}

func noEnv(string) string { return "" }
