package lifecycle_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

// TestConcurrentClaimsOnFewProcesses: 40 CreateGameSession and 4 queue
// placements at once compete for 8 processes on 2 computes. Every process
// ends up hosting exactly one game session, pushed to it once, and every
// session that was answered or placed is on a process of its own.
func TestConcurrentClaimsOnFewProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		procs := h.readyProcs(2, 4)
		h.queue(&gamelift.CreateGameSessionQueueInput{Name: aws.String("race"), Destinations: dest(h.fleet)})
		var mu sync.Mutex
		created := map[string]bool{}
		var wg sync.WaitGroup
		for i := range 44 {
			wg.Go(func() {
				if i%11 == 10 {
					_, err := h.startPlacement(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("race-%d", i)),
						GameSessionQueueName: aws.String("race")})
					if err != nil {
						t.Errorf("StartGameSessionPlacement: %v", err)
					}
					return
				}
				gs, err := h.create(nil)
				if err != nil {
					if apiErrorCode(err) != "FleetCapacityExceededException" {
						t.Errorf("CreateGameSession: %v", err)
					}
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if created[aws.ToString(gs.GameSessionId)] {
					t.Errorf("game session %s answered twice", aws.ToString(gs.GameSessionId))
				}
				created[aws.ToString(gs.GameSessionId)] = true
			})
		}
		wg.Wait()
		hosted := map[string]string{} // session → process
		for _, p := range procs {
			id := p.push("CreateGameSession")["GameSessionId"].(string)
			if other, ok := hosted[id]; ok {
				t.Errorf("game session %s pushed to %s and %s", id, other, p.pid)
			}
			hosted[id] = p.pid
			if got := h.process(p.compute, p.pid).GameSessionID; got != id {
				t.Errorf("process %s hosts %q, was pushed %s", p.pid, got, id)
			}
			p.noPush()
		}
		for id := range created {
			if _, ok := hosted[id]; !ok {
				t.Errorf("game session %s was answered but reached no process", id)
			}
		}
		if placed := len(hosted) - len(created); placed < 0 || placed > 4 {
			t.Errorf("%d sessions answered, %d hosted", len(created), len(hosted))
		}
	})
}

// TestConcurrentClaimsKeepTheActivationCap: with
// MaxConcurrentGameSessionActivations 1, 20 CreateGameSession at once on
// 2 computes of 3 processes each give exactly one session per compute.
func TestConcurrentClaimsKeepTheActivationCap(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		_, err := h.gl.UpdateRuntimeConfiguration(t.Context(), &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String(h.fleet),
			RuntimeConfiguration: &types.RuntimeConfiguration{MaxConcurrentGameSessionActivations: aws.Int32(1),
				ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/game/server"), ConcurrentExecutions: aws.Int32(3)}}}})
		if err != nil {
			t.Fatal(err)
		}
		procs := h.readyProcs(2, 3)
		var mu sync.Mutex
		computes := map[string]int{}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				gs, err := h.create(nil)
				if err != nil {
					if apiErrorCode(err) != "FleetCapacityExceededException" {
						t.Errorf("CreateGameSession: %v", err)
					}
					return
				}
				s := h.session(aws.ToString(gs.GameSessionId))
				mu.Lock()
				computes[aws.ToString(s.ComputeName)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(computes) != 2 || computes["host-0"] != 1 || computes["host-1"] != 1 {
			t.Errorf("sessions per compute %v, want one on each of host-0 and host-1", computes)
		}
		n := 0
		for _, p := range procs {
			if h.process(p.compute, p.pid).GameSessionID != "" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d processes host a session, want 2", n)
		}
	})
}

// readyProcs registers computes host-0… with perCompute ready processes
// each, created one millisecond apart.
func (h *harness) readyProcs(computes, perCompute int) []*rawProc {
	h.t.Helper()
	var out []*rawProc
	for c := range computes {
		name := fmt.Sprintf("host-%d", c)
		tok := h.compute(name, fmt.Sprintf("10.0.1.%d", c+1))
		for i := range perCompute {
			h.clock.Add(time.Millisecond)
			p := h.dial(name, fmt.Sprintf("proc-%d-%d", c, i), tok)
			p.ready(7000 + i)
			out = append(out, p)
		}
	}
	return out
}
