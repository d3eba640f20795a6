package containers_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// env is a server on a settable clock with a container fleet whose game
// server container groups the test registers and runs itself, as the
// Kubernetes controller would, each with one Go SDK process.
type env struct {
	t     *testing.T
	clock *fleettest.Clock
	api   *apitest.Env
	gl    *gamelift.Client
	svc   *containers.Service
	fleet string
}

func newEnv(t *testing.T, opts []apitest.Option) *env {
	clock := &fleettest.Clock{}
	clock.Set(time.Now().UTC().Truncate(time.Second))
	opts = append(append([]apitest.Option{apitest.WithFaultInjection}, opts...),
		func(c *server.Config) { c.Now, c.UnhealthyTimeout = clock.Now, 24*time.Hour })
	e := &env{t: t, clock: clock, api: apitest.Start(t, opts...)}
	e.gl, e.svc = e.api.Client(), e.api.Server.Containers()
	ctx := context.Background()
	if _, err := e.gl.CreateContainerGroupDefinition(ctx, &gamelift.CreateContainerGroupDefinitionInput{
		Name: aws.String("arena"), OperatingSystem: types.ContainerOperatingSystemAmazonLinux2023,
		TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
		GameServerContainerDefinition: &types.GameServerContainerDefinitionInput{
			ContainerName: aws.String("game"), ImageUri: aws.String("registry.example/arena:1"), ServerSdkVersion: aws.String("5.2.0"),
			PortConfiguration: &types.ContainerPortConfiguration{ContainerPortRanges: []types.ContainerPortRange{
				{FromPort: aws.Int32(7777), ToPort: aws.Int32(7777), Protocol: types.IpProtocolUdp}}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	out, err := e.gl.CreateContainerFleet(ctx, &gamelift.CreateContainerFleetInput{
		FleetRoleArn: aws.String("arn:aws:iam::123456789012:role/any"), GameServerContainerGroupDefinitionName: aws.String("arena")})
	if err != nil {
		t.Fatal(err)
	}
	e.fleet = aws.ToString(out.ContainerFleet.FleetId)
	return e
}

// server is a group's game server: its SDK process, and what the service
// told it.
type gameServer struct {
	proc       *sdk.Process
	terminated chan struct{}
}

// group registers a game server container group, reports it running and
// starts its game server, ready; it returns the server and the group's
// auth token.
func (e *env) group(name string) (*gameServer, string) {
	e.t.Helper()
	ctx := context.Background()
	token, err := e.svc.RegisterContainerCompute(ctx, containers.ContainerCompute{FleetID: e.fleet, Name: name, InstanceID: e.fleet + "-0"})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.svc.ContainerComputeRunning(ctx, e.fleet, name, "10.0.0.7"); err != nil {
		e.t.Fatal(err)
	}
	gs := &gameServer{terminated: make(chan struct{}, 1)}
	gs.proc, err = e.connect(name, "proc-"+name, token)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { gs.proc.Destroy() })
	if err := gs.proc.ProcessReady(sdk.ProcessParameters{Port: 7777, OnStartGameSession: func(sdk.GameSession) {},
		OnProcessTerminate: func() { gs.terminated <- struct{}{} }}); err != nil {
		e.t.Fatal(err)
	}
	return gs, token
}

// connect starts a Go SDK process on a group.
func (e *env) connect(group, pid, token string) (*sdk.Process, error) {
	return sdk.Init(sdk.ServerParameters{WebSocketURL: e.api.Server.SDKEndpoint(), ProcessID: pid, HostID: group,
		FleetID: e.fleet, AuthToken: token}, sdk.Options{
		Getenv: func(string) string { return "" }, Exit: func(int) {}, ConnectAttempts: 1,
		HealthCheckInterval: time.Hour, DrainTimeout: 10 * time.Millisecond, ReconnectMin: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// session places a game session on the fleet's one free server and
// activates it there.
func (e *env) session(on *gameServer) string {
	e.t.Helper()
	out, err := e.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(e.fleet),
		MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		e.t.Fatal(err)
	}
	fleettest.WaitFor(e.t, "the session to reach its server", func() bool { return on.proc.ActivateGameSession() == nil })
	return aws.ToString(out.GameSession.GameSessionId)
}

func (e *env) sessionStatus(id string) (types.GameSessionStatus, types.GameSessionStatusReason) {
	e.t.Helper()
	d, err := e.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.GameSessions[0].Status, d.GameSessions[0].StatusReason
}

// TestTerminateContainerGroup: a group a scale-down removes while it hosts
// an unprotected game session is told first and let go later, as GameLift
// does with onProcessTerminate and its five minutes: its server gets
// TerminateProcess with the termination time (GetTerminationTime), its
// session goes TERMINATING and refuses players, the group takes no new
// server process, and it is finished only once its server has ended the
// session (ProcessEnding), or at the termination time, with
// SERVER_PROCESS_FORCE_TERMINATED. A server that reconnects meanwhile is
// told again, with the same time. A protected session keeps its group.
func TestTerminateContainerGroup(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opts)
			ctx := context.Background()
			start := e.clock.Now()
			deadline := start.Add(containers.DefaultTerminationWait)

			// A protected session keeps its group.
			guarded, _ := e.group("guarded")
			guardedSession := e.session(guarded)
			if _, err := e.gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(guardedSession),
				ProtectionPolicy: types.ProtectionPolicyFullProtection}); err != nil {
				t.Fatal(err)
			}
			if leaving, err := e.svc.TerminateContainerGroup(ctx, e.fleet, "guarded"); err != nil || leaving {
				t.Fatalf("a group with a protected session: leaving %v, %v; want it kept", leaving, err)
			}

			// One that answers, one that does not.
			answers, _ := e.group("answers")
			answersSession := e.session(answers)
			silent, token := e.group("silent")
			silentSession := e.session(silent)
			for _, g := range []string{"answers", "silent"} {
				if leaving, err := e.svc.TerminateContainerGroup(ctx, e.fleet, g); err != nil || !leaving {
					t.Fatalf("group %s: leaving %v, %v", g, leaving, err)
				}
			}
			for _, s := range []*gameServer{answers, silent} {
				select {
				case <-s.terminated:
				case <-time.After(10 * time.Second):
					t.Fatal("no TerminateProcess reached a server")
				}
				if at, err := s.proc.GetTerminationTime(); err != nil || at != deadline.Unix() {
					t.Errorf("GetTerminationTime: %d, %v; want %d (five minutes on)", at, err, deadline.Unix())
				}
			}
			if st, reason := e.sessionStatus(silentSession); st != types.GameSessionStatusTerminating || reason != types.GameSessionStatusReasonInterrupted {
				t.Errorf("session of a group being removed: %s (%s), want TERMINATING (INTERRUPTED)", st, reason)
			}
			if _, err := e.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(silentSession),
				PlayerId: aws.String("late")}); err == nil {
				t.Error("a player joined a session whose group is being removed")
			}
			c, err := e.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String("silent")})
			if err != nil || c.Compute.ComputeStatus != types.ComputeStatusTerminating {
				t.Fatalf("the group being removed: %v, %v; want TERMINATING", c, err)
			}
			// A container restarting in it gets no new server process.
			if p, err := e.connect("silent", "restarted", token); err == nil {
				p.Destroy()
				t.Error("a new server process registered on a group being removed")
			}

			// A server that reconnects (its connection dropped) is told
			// again, with the same time.
			e.clock.Set(start.Add(time.Minute))
			apitest.Extension[extapi.InjectFaultOutput](t, e.api, "InjectFault",
				extapi.InjectFaultInput{Fault: extapi.Fault{Kind: "DROP_CONNECTION", FleetId: e.fleet, ProcessId: "proc-silent"}})
			select {
			case <-silent.terminated:
			case <-time.After(10 * time.Second):
				t.Fatal("no TerminateProcess after the reconnect")
			}
			if at, err := silent.proc.GetTerminationTime(); err != nil || at != deadline.Unix() {
				t.Errorf("GetTerminationTime after the reconnect: %d, %v; want %d", at, err, deadline.Unix())
			}

			// The server that answers ends its session: its group may go.
			if err := answers.proc.ProcessEnding(); err != nil {
				t.Fatal(err)
			}
			for g, want := range map[string]bool{"answers": true, "silent": false} {
				if done, err := e.svc.FinishContainerGroup(ctx, e.fleet, g); err != nil || done != want {
					t.Errorf("group %s finished: %v, %v; want %v", g, done, err, want)
				}
			}
			if st, reason := e.sessionStatus(answersSession); st != types.GameSessionStatusTerminated || reason != types.GameSessionStatusReasonInterrupted {
				t.Errorf("session ended by its server: %s (%s), want TERMINATED (INTERRUPTED)", st, reason)
			}

			// A second short of the time, the silent one still waits; at
			// the time it goes regardless.
			e.clock.Set(deadline.Add(-time.Second))
			if done, err := e.svc.FinishContainerGroup(ctx, e.fleet, "silent"); err != nil || done {
				t.Fatalf("the silent group before its time: finished %v, %v", done, err)
			}
			e.clock.Set(deadline)
			if done, err := e.svc.FinishContainerGroup(ctx, e.fleet, "silent"); err != nil || !done {
				t.Fatalf("the silent group at its time: finished %v, %v", done, err)
			}
			if st, reason := e.sessionStatus(silentSession); st != types.GameSessionStatusTerminated || reason != types.GameSessionStatusReasonInterrupted {
				t.Errorf("session of the silent group: %s (%s), want TERMINATED (INTERRUPTED)", st, reason)
			}
			if st, _ := e.sessionStatus(guardedSession); st != types.GameSessionStatusActive {
				t.Errorf("the protected session is %s", st)
			}
			for _, g := range []string{"answers", "silent"} {
				if _, err := e.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(g)}); err == nil {
					t.Errorf("group %s is still a compute", g)
				}
			}
			ev, err := e.gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(e.fleet)})
			if err != nil {
				t.Fatal(err)
			}
			var forced []string
			for _, x := range ev.Events {
				switch x.EventCode {
				case types.EventCodeServerProcessForceTerminated:
					forced = append(forced, aws.ToString(x.ResourceId)+": "+aws.ToString(x.Message))
				case types.EventCodeServerProcessCrashed:
					t.Errorf("unexpected %s: %s", x.EventCode, aws.ToString(x.Message))
				}
			}
			if len(forced) != 1 || !strings.HasPrefix(forced[0], "proc-silent: ") || !strings.Contains(forced[0], deadline.Format(time.RFC3339)) {
				t.Errorf("SERVER_PROCESS_FORCE_TERMINATED: %q, want one for proc-silent naming %s", forced, deadline.Format(time.RFC3339))
			}
		})
	}
}

// TestRecycleContainerGroup: a group on a node taken out of service gets
// INSTANCE_RECYCLED once, for its instance; an idle one is removed at
// once, a busy one keeps its session (players still join it) and takes
// no new server process until the session has ended, and goes then.
func TestRecycleContainerGroup(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opts)
			ctx := context.Background()
			busy, token := e.group("busy")
			id := e.session(busy)
			e.group("idle")
			recycle := func(group string, want bool) {
				t.Helper()
				removed, err := e.svc.RecycleContainerGroup(ctx, e.fleet, group, "Instance "+e.fleet+"-0: group "+group+" is recycled.")
				if err != nil || removed != want {
					t.Fatalf("recycling %s: removed %v, %v; want %v", group, removed, err, want)
				}
			}
			recycle("idle", true)
			recycle("busy", false)
			recycle("busy", false)
			if st, _ := e.sessionStatus(id); st != types.GameSessionStatusActive {
				t.Errorf("the recycled group's session is %s, want ACTIVE", st)
			}
			if _, err := e.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("ada")}); err != nil {
				t.Errorf("a player joining the recycled group's session: %v", err)
			}
			if p, err := e.connect("busy", "restarted", token); err == nil {
				p.Destroy()
				t.Error("a new server process registered on a recycled group")
			}
			if err := busy.proc.ProcessEnding(); err != nil {
				t.Fatal(err)
			}
			recycle("busy", true)
			for _, g := range []string{"busy", "idle"} {
				if _, err := e.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(e.fleet), ComputeName: aws.String(g)}); err == nil {
					t.Errorf("group %s is still a compute", g)
				}
			}
			ev, err := e.gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(e.fleet)})
			if err != nil {
				t.Fatal(err)
			}
			var recycled []string
			for _, x := range ev.Events {
				if x.EventCode == types.EventCodeInstanceRecycled {
					if r := aws.ToString(x.ResourceId); r != e.fleet+"-0" {
						t.Errorf("INSTANCE_RECYCLED names %s, want the instance %s-0", r, e.fleet)
					}
					recycled = append(recycled, aws.ToString(x.Message))
				}
			}
			slices.Sort(recycled)
			if want := []string{"Instance " + e.fleet + "-0: group busy is recycled.", "Instance " + e.fleet + "-0: group idle is recycled."}; !slices.Equal(recycled, want) {
				t.Errorf("INSTANCE_RECYCLED: %q, want %q", recycled, want)
			}
		})
	}
}
