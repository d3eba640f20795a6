package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/agent"
)

// BenchmarkWrappedActivation measures a game binary without an SDK under
// the agent's wrapper (testdata/sdkless, which listens at once): the time
// from CreateGameSession to the session being ACTIVE, as DescribeGameSessions
// shows it (asked every millisecond), and within it the binary's own start,
// from its exec to its port listening, as the wrapper saw it. Beside it, in
// the same run, the same measure for the example chat server, which has the
// Go SDK, runs before the session and activates in OnStartGameSession: the
// ceiling for a session's activation on this machine.
//
//	go test ./internal/agent -run '^$' -bench WrappedActivation -benchtime 100x
func BenchmarkWrappedActivation(b *testing.B) {
	b.Run("wrapped", func(b *testing.B) {
		e := start(b)
		activated := make(chan agent.Event, 1)
		e.runWrapped(b, "", 1, func(c *agent.Config) {
			observe := c.Observe
			c.Observe = func(ev agent.Event) {
				observe(ev)
				if ev.Kind == agent.EvActivated {
					activated <- ev
				}
			}
		})
		var active, binary, own []time.Duration
		b.ResetTimer()
		for range b.N {
			e.waitIdle(b)
			began := time.Now()
			gs := e.create(b)
			at := e.activeAt(b, gs)
			ev := <-activated
			active = append(active, at.Sub(began))
			binary = append(binary, ev.Delay)
			own = append(own, at.Sub(began)-ev.Delay)
			ps, err := e.gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{
				GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String("player-1")})
			if err != nil {
				b.Fatal(err)
			}
			play(b, "tcp", ps.PlayerSession) // the game ends when its player leaves
		}
		b.StopTimer()
		report(b, "active", active)
		report(b, "binary-start", binary)
		report(b, "wrapper", own)
	})
	b.Run("sdk-game", func(b *testing.B) {
		e := start(b)
		e.setRuntime(b, chatBinary, "-port 0", 1)
		e.runAgent(b)
		var active []time.Duration
		b.ResetTimer()
		for range b.N {
			e.waitIdle(b)
			began := time.Now()
			gs := e.create(b)
			active = append(active, e.activeAt(b, gs).Sub(began))
			e.join(b, gs)
		}
		b.StopTimer()
		report(b, "active", active)
	})
}

// activeAt asks DescribeGameSessions every millisecond until gs is ACTIVE
// and returns when it was seen so.
func (e *env) activeAt(t testing.TB, gs *gamelift.CreateGameSessionOutput) time.Time {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		out, err := e.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
		if err != nil {
			t.Fatal(err)
		}
		if out.GameSessions[0].Status == types.GameSessionStatusActive {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("game session %s", out.GameSessions[0].Status)
		}
		time.Sleep(time.Millisecond) // the polling interval of the client being modelled
	}
}
