package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/agent"
)

// BenchmarkRelaunch measures, under the agent, the time from a game
// server's clean exit (one match, ProcessEnding, exit 0) to its
// replacement being ready for a session: the first CreateGameSession that
// succeeds, tried every 2 ms from the exit on, as an impatient backend
// would. Beside it, in the same run, the game's own start: the same binary
// started directly (no agent) with the same variables, from its start to
// the first CreateGameSession that succeeds. The difference is what the
// agent adds.
//
//	go test ./internal/agent -run '^$' -bench Relaunch -benchtime 100x
func BenchmarkRelaunch(b *testing.B) {
	b.Run("agent", func(b *testing.B) {
		e := start(b)
		e.setRuntime(b, chatBinary, "-port 0", 1)
		exits, launches := make(chan time.Time, 1), make(chan time.Time, 1)
		e.runAgent(b, func(c *agent.Config) {
			observe := c.Observe
			c.Observe = func(ev agent.Event) {
				observe(ev)
				switch ev.Kind {
				case agent.EvExited:
					exits <- time.Now()
				case agent.EvLaunched:
					launches <- time.Now()
				}
			}
		})
		gs, _ := e.createWhenReady(b)
		<-launches // the first process's
		var ready, launched []time.Duration
		b.ResetTimer()
		for range b.N {
			e.endMatch(b, gs)
			exited := <-exits
			var at time.Time
			gs, at = e.createWhenReady(b)
			ready = append(ready, at.Sub(exited))
			launched = append(launched, (<-launches).Sub(exited))
		}
		b.StopTimer()
		report(b, "ready", ready)
		report(b, "launch", launched)
	})
	b.Run("game-alone", func(b *testing.B) {
		e := start(b)
		ctx := context.Background()
		reg, err := e.gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(e.fleet),
			ComputeName: aws.String(compute), Location: aws.String(location), IpAddress: aws.String("127.0.0.1")})
		if err != nil {
			b.Fatal(err)
		}
		tok, err := e.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(compute)})
		if err != nil {
			b.Fatal(err)
		}
		var ready []time.Duration
		b.ResetTimer()
		for i := range b.N {
			cmd := exec.Command(chatBinary, "-port", "0")
			cmd.Env = append(os.Environ(),
				"GAMELIFT_SDK_WEBSOCKET_URL="+aws.ToString(reg.Compute.GameLiftServiceSdkEndpoint),
				"GAMELIFT_SDK_AUTH_TOKEN="+aws.ToString(tok.AuthToken),
				fmt.Sprintf("GAMELIFT_SDK_PROCESS_ID=proc-alone-%d", i),
				"GAMELIFT_SDK_HOST_ID="+compute, "GAMELIFT_SDK_FLEET_ID="+e.fleet)
			began := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			gs, at := e.createWhenReady(b)
			ready = append(ready, at.Sub(began))
			e.endMatch(b, gs)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("the game server exited with %v", err)
			}
		}
		b.StopTimer()
		report(b, "ready", ready)
	})
}

// createWhenReady calls CreateGameSession every 2 ms until it succeeds,
// and returns the session and when it succeeded.
func (e *env) createWhenReady(t testing.TB) (*gamelift.CreateGameSessionOutput, time.Time) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		gs, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{
			FleetId: aws.String(e.fleet), Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2),
		})
		if err == nil {
			return gs, time.Now()
		}
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "FleetCapacityExceededException" || time.Now().After(deadline) {
			t.Fatalf("CreateGameSession: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // the retry interval of the client being modelled
	}
}

// endMatch plays gs's match to its end without waiting for the session to
// be TERMINATED: a player joins and leaves, and the chat server ends.
func (e *env) endMatch(t testing.TB, gs *gamelift.CreateGameSessionOutput) {
	t.Helper()
	e.waitSession(t, gs, "ACTIVE")
	e.join(t, gs)
}

// report adds the p50 and p99 of d, in milliseconds, to b's results.
func report(b *testing.B, name string, d []time.Duration) {
	slices.Sort(d)
	at := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}
