package apitest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

// Raced is what a race of reservations on one game session came to.
type Raced struct {
	Acked []string // the player session ids acknowledged
	Full  int      // calls refused with GameSessionFullException
	Other []error
}

// RaceSeats runs singles CreatePlayerSession and pairs CreatePlayerSessions
// (two players each) calls on game session id at once, the calls taking
// the clients in turn (one client per node, say).
func RaceSeats(t testing.TB, clients []*gamelift.Client, id string, singles, pairs int) Raced {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		out   Raced
		start = make(chan struct{})
	)
	result := func(ps []types.PlayerSession, err error) {
		var full *types.GameSessionFullException
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			for _, p := range ps {
				out.Acked = append(out.Acked, aws.ToString(p.PlayerSessionId))
			}
		case errors.As(err, &full):
			out.Full++
		default:
			out.Other = append(out.Other, err)
		}
	}
	for i := range singles + pairs {
		wg.Add(1)
		gl := clients[i%len(clients)]
		go func() {
			defer wg.Done()
			<-start
			ctx := context.Background()
			if i < singles {
				one, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String(fmt.Sprint("p", i))})
				if err != nil {
					result(nil, err)
				} else {
					result([]types.PlayerSession{*one.PlayerSession}, nil)
				}
				return
			}
			two, err := gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id),
				PlayerIds: []string{fmt.Sprint("a", i), fmt.Sprint("b", i)}})
			if err != nil {
				result(nil, err)
			} else {
				result(two.PlayerSessions, nil)
			}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// CheckSeats checks that game session id counts exactly the acknowledged
// player sessions, and that DescribePlayerSessions lists exactly them,
// RESERVED.
func CheckSeats(t testing.TB, gl *gamelift.Client, id string, acked []string) {
	t.Helper()
	ctx := context.Background()
	g, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil || len(g.GameSessions) != 1 || int(aws.ToInt32(g.GameSessions[0].CurrentPlayerSessionCount)) != len(acked) {
		t.Errorf("DescribeGameSessions: %+v %v, want CurrentPlayerSessionCount %d", g, err, len(acked))
	}
	d, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range d.PlayerSessions {
		listed[aws.ToString(p.PlayerSessionId)] = true
		if p.Status != types.PlayerSessionStatusReserved {
			t.Errorf("player session %s is %s, want RESERVED", aws.ToString(p.PlayerSessionId), p.Status)
		}
	}
	for _, psID := range acked {
		if !listed[psID] {
			t.Errorf("acknowledged player session %s is not listed", psID)
		}
	}
	if len(d.PlayerSessions) != len(acked) {
		t.Errorf("DescribePlayerSessions lists %d player sessions, %d were acknowledged", len(d.PlayerSessions), len(acked))
	}
}
