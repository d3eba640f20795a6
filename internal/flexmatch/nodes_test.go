package flexmatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/storetest"
	"github.com/anylift/anylift/internal/wire"
)

// TestMatchersOnTwoNodesNeverShareATicket runs the matcher of two
// services (two nodes) over one store at the same time, without the
// lease: the locked re-read at claim time must keep every ticket in
// exactly one match.
func TestMatchersOnTwoNodesNeverShareATicket(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		now := time.UnixMilli(1767225600000).UTC()
		clock := func() time.Time { return now }
		cfg := control.Config{Account: game.Account{Region: "us-west-2", ID: "123456789012"}}
		a, b := newNode(st, cfg, clock), newNode(st, cfg, clock)
		if _, err := a.CreateMatchmakingRuleSet(ctx, &wire.CreateMatchmakingRuleSetInput{Name: wire.String("rules"), RuleSetBody: wire.String(duelRules)}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateMatchmakingConfiguration(ctx, &wire.CreateMatchmakingConfigurationInput{Name: wire.String("cfg"), RuleSetName: wire.String("rules"),
			RequestTimeoutSeconds: wire.Int32(60), AcceptanceRequired: wire.Bool(false), FlexMatchMode: wire.String(game.FlexMatchStandalone)}); err != nil {
			t.Fatal(err)
		}
		const n = 200
		for i := range n {
			if _, err := a.StartMatchmaking(ctx, &wire.StartMatchmakingInput{TicketId: wire.String(fmt.Sprint("t", i)), ConfigurationName: wire.String("cfg"),
				Players: []wire.Player{player(fmt.Sprint("p", i), 10)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.startSearching(ctx, "cfg", now); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.matchPool(ctx, "cfg", now)
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		succeeded := map[string]int{}
		storetest.View(t, st, func(tx store.Tx) error {
			list, err := tx.ListNotifications(0, 10*n)
			for _, note := range list {
				if note.Type != evSucceeded {
					continue
				}
				var env struct{ Detail matchDetail }
				if err := json.Unmarshal(note.Envelope, &env); err != nil {
					return err
				}
				for _, tk := range env.Detail.Tickets {
					succeeded[tk.TicketID]++
				}
			}
			return err
		})
		if len(succeeded) != n {
			t.Errorf("%d of %d tickets matched", len(succeeded), n)
		}
		for id, k := range succeeded {
			if k != 1 {
				t.Errorf("ticket %s in %d matches", id, k)
			}
		}
	})
}
