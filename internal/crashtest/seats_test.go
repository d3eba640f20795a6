package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/storetestenv"
)

// A kill -9 while seats are being taken leaves every acknowledged player
// session in place and every session's seat count equal to its RESERVED and
// ACTIVE player sessions, never above its maximum.
func TestKill9KeepsSeatsConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := binary(t)
	dir := t.TempDir()
	const sessions, seats = 10, 8
	_, ids := storetestenv.SeedActiveSessions(t, dir, game.Account{Region: "us-west-2", ID: "000000000000"}, "custom-crash", sessions, seats)
	cmd, url := start(t, bin, dir)
	env := &apitest.Env{URL: url}

	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		once  sync.Once
	)
	killed := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				body := fmt.Sprintf(`{"GameSessionId": %q, "PlayerId": "p-%d-%d"}`, ids[(w+i)%sessions], w, i)
				req := env.NewJSONRequest(t, "CreatePlayerSession", body)
				apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
				resp, err := httpClient.Do(req)
				if err != nil {
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					var out struct {
						PlayerSession struct{ PlayerSessionId string }
					}
					json.Unmarshal(b, &out)
					mu.Lock()
					acked = append(acked, out.PlayerSession.PlayerSessionId)
					n := len(acked)
					mu.Unlock()
					if n == sessions*seats/2 {
						once.Do(func() { cmd.Process.Kill(); close(killed) })
					}
				}
			}
		}(w)
	}
	wg.Wait()
	cmd.Wait()

	st, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(context.Background(), func(tx store.Tx) error {
		for _, psID := range acked {
			if _, err := tx.GetPlayerSession(psID); err != nil {
				t.Errorf("acknowledged player session %s: %v", psID, err)
			}
		}
		for _, id := range ids {
			gs, err := tx.GetGameSession(id)
			if err != nil {
				return err
			}
			list, _, err := tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: id}, store.Page{Limit: 1000})
			if err != nil {
				return err
			}
			occupied := 0
			for _, p := range list {
				if p.Occupies() {
					occupied++
				}
			}
			if gs.CurrentPlayerSessionCount != occupied || occupied > seats {
				t.Errorf("%s: count %d, occupied %d, max %d", id, gs.CurrentPlayerSessionCount, occupied, seats)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
