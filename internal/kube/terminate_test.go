package kube_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/server"
)

// TestScaleDownTellsServers: a scale-down that removes game server
// container groups hosting unprotected game sessions first tells their
// server processes (onProcessTerminate, with the termination time five
// minutes ahead), as GameLift does, and removes each pod once its process
// has ended its session (ProcessEnding) or gone, or once the five minutes
// have passed on the server's clock. Three groups host a session each:
// the chat example ends its session when told; one program is stopped
// (SIGSTOP: it answers nothing and keeps its connection) and later
// killed, which ends its group as gone; another stays stopped until its
// time is up, and is then stopped regardless (the kubelet's SIGTERM and
// SIGCONT end it).
func TestScaleDownTellsServers(t *testing.T) {
	cluster := kubetest.Start(t)
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) { scaleDownTellsServers(t, cluster, opts) })
	}
}

func scaleDownTellsServers(t *testing.T, cluster *kubetest.Cluster, opts []apitest.Option) {
	clock := &fleettest.Clock{}
	start := time.Now().UTC().Truncate(time.Second)
	clock.Set(start)
	// The clock stands still but for the jump below; no process is to
	// be judged unhealthy by it.
	opts = append(slices.Clone(opts), func(c *server.Config) { c.Now, c.UnhealthyTimeout = clock.Now, 24*time.Hour })
	w := newWorld(t, cluster, opts...)
	ctx := context.Background()
	fleet := w.chatFleet(freePort(t))
	w.capacity(fleet, 3, 3)
	w.groups(fleet, 0, 3)

	// A session on each group.
	var sessions []string
	host := map[string]string{} // session → its group (pod)
	for range 3 {
		gs := createSession(t, w.gl, fleet)
		sessions = append(sessions, aws.ToString(gs.GameSessionId))
	}
	exectest.Eventually(t, "three ACTIVE sessions on three groups", 30*time.Second, func() (bool, string) {
		d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(fleet), StatusFilter: aws.String("ACTIVE")})
		if err != nil {
			return false, err.Error()
		}
		for _, s := range d.GameSessions {
			host[aws.ToString(s.GameSessionId)] = aws.ToString(s.ComputeName)
		}
		return len(d.GameSessions) == 3 && len(host) == 3, fmt.Sprintf("%d ACTIVE", len(d.GameSessions))
	})
	w.groups(fleet, 3, 0)
	answers, killed, silent := host[sessions[0]], host[sessions[1]], host[sessions[2]]
	w.kubelet.signal(killed, syscall.SIGSTOP)
	w.kubelet.signal(silent, syscall.SIGSTOP)

	w.capacity(fleet, 0, 3)
	deadline := start.Add(containers.DefaultTerminationWait)

	// The chat program that answers is told, says by when (its
	// GetTerminationTime), ends its session, and its group goes.
	exectest.Eventually(t, "the group that answered to go", 30*time.Second, func() (bool, string) {
		return w.gone(fleet, answers), w.podState(fleet, answers)
	})
	if out, want := w.kubelet.output(answers), "termination_time="+strconv.FormatInt(deadline.Unix(), 10); !strings.Contains(out, want) {
		t.Errorf("the chat program that answered did not log %s:\n%s", want, out)
	}
	w.session(sessions[0], types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)

	// The other two wait, TERMINATING, their pods in place, their
	// sessions TERMINATING; no group is made in their places.
	for _, name := range []string{killed, silent} {
		c, err := w.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(name)})
		if err != nil {
			t.Fatalf("group %s: %v", name, err)
		}
		if s := c.Compute.ComputeStatus; s != types.ComputeStatusTerminating {
			t.Errorf("group %s is %s, want TERMINATING", name, s)
		}
		if !w.podLive(fleet, name) {
			t.Errorf("the pod of %s went before its processes ended or their time was up", name)
		}
	}
	w.session(sessions[1], types.GameSessionStatusTerminating, types.GameSessionStatusReasonInterrupted)
	w.session(sessions[2], types.GameSessionStatusTerminating, types.GameSessionStatusReasonInterrupted)
	c, err := w.gl.DescribeFleetCapacity(ctx, &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
	if err != nil {
		t.Fatal(err)
	}
	if g := c.FleetCapacity[0].GameServerContainerGroupCounts; aws.ToInt32(g.TERMINATING) != 2 || aws.ToInt32(g.ACTIVE) != 0 || aws.ToInt32(g.IDLE) != 0 {
		t.Errorf("groups: %d TERMINATING, %d ACTIVE, %d IDLE, want 2, 0, 0", aws.ToInt32(g.TERMINATING), aws.ToInt32(g.ACTIVE), aws.ToInt32(g.IDLE))
	}
	// A player cannot join a session that is ending.
	if _, err := w.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(sessions[2]),
		PlayerId: aws.String("late")}); err == nil {
		t.Errorf("a player joined a TERMINATING session")
	}

	// One dies without ProcessEnding: its connection closes, and its
	// group goes, before its time.
	w.kubelet.signal(killed, syscall.SIGKILL)
	exectest.Eventually(t, "the group whose program died to go", 30*time.Second, func() (bool, string) {
		return w.gone(fleet, killed), w.podState(fleet, killed)
	})
	w.session(sessions[1], types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
	if !w.podLive(fleet, silent) {
		t.Fatalf("the silent group's pod went before its time")
	}

	// The silent one's time comes: it goes regardless.
	clock.Set(deadline)
	exectest.Eventually(t, "the silent group to go at its time", 30*time.Second, func() (bool, string) {
		return w.gone(fleet, silent), w.podState(fleet, silent)
	})
	w.session(sessions[2], types.GameSessionStatusTerminated, types.GameSessionStatusReasonInterrupted)
	w.groups(fleet, 0, 0)

	events := fleetEvents(t, w.gl, fleet)
	var forced, crashed []string
	for _, msgs := range events[types.EventCodeServerProcessForceTerminated] {
		forced = append(forced, msgs...)
	}
	for _, msgs := range events[types.EventCodeServerProcessCrashed] {
		crashed = append(crashed, msgs...)
	}
	if len(forced) != 1 || !strings.Contains(forced[0], silent) || !strings.Contains(forced[0], deadline.Format(time.RFC3339)) {
		t.Errorf("SERVER_PROCESS_FORCE_TERMINATED: %q, want one naming %s and %s", forced, silent, deadline.Format(time.RFC3339))
	}
	if len(crashed) != 1 || !strings.Contains(crashed[0], killed) {
		t.Errorf("SERVER_PROCESS_CRASHED: %q, want one naming %s", crashed, killed)
	}
}

// gone reports whether a group is neither a compute nor a pod (being
// deleted counts as gone: its deletion is asked).
func (w *world) gone(fleet, name string) bool {
	_, err := w.gl.DescribeCompute(context.Background(), &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(name)})
	return err != nil && !w.podLive(fleet, name)
}

// podLive reports whether a group's pod is there and not being deleted.
func (w *world) podLive(fleet, name string) bool {
	for _, p := range w.livePods(fleet) {
		if p.Name == name {
			return true
		}
	}
	return false
}

func (w *world) podState(fleet, name string) string {
	for _, p := range w.pods(fleet) {
		if p.Name == name {
			return fmt.Sprintf("pod %s %s, being deleted %v", name, p.Status.Phase, p.DeletionTimestamp != nil)
		}
	}
	return "pod " + name + " gone"
}

// session checks a game session's status and reason.
func (w *world) session(id string, status types.GameSessionStatus, reason types.GameSessionStatusReason) {
	w.t.Helper()
	d, err := w.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil {
		w.t.Fatal(err)
	}
	if s := d.GameSessions[0]; s.Status != status || s.StatusReason != reason {
		w.t.Errorf("session %s is %s (%s), want %s (%s)", id, s.Status, s.StatusReason, status, reason)
	}
}
