package processtest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	sdk "github.com/anylift/anylift/sdk/server"
)

// sdkProcess starts an in-process Go SDK server process that activates
// every game session it is given.
func (e *env) sdkProcess(t *testing.T, pid string) *sdk.Process {
	t.Helper()
	proc, err := sdk.Init(sdk.ServerParameters{WebSocketURL: e.Server.SDKEndpoint(), ProcessID: pid, HostID: computeName,
		FleetID: e.fleet, AuthToken: e.token}, sdk.Options{
		Getenv: func(string) string { return "" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Destroy() })
	err = proc.ProcessReady(sdk.ProcessParameters{
		Port:               7000,
		OnStartGameSession: func(sdk.GameSession) { proc.ActivateGameSession() },
		OnProcessTerminate: func() {},
	})
	if err != nil {
		t.Fatal(err)
	}
	return proc
}

// TestProcessCannotTouchAnotherSessionsPlayers: a process accepting,
// removing or reading a player of a game session it does not host is
// refused, and the player session is left as it was.
func TestProcessCannotTouchAnotherSessionsPlayers(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, opts)
			procs := map[string]*sdk.Process{"proc-a": e.sdkProcess(t, "proc-a"), "proc-b": e.sdkProcess(t, "proc-b")}
			e.waitProcesses(t, 2)
			var ids []string
			for range 2 {
				id, err := e.createSession(t, 4)
				if err != nil {
					t.Fatal(err)
				}
				e.waitSession(t, id, types.GameSessionStatusActive)
				ids = append(ids, id)
			}
			mine, theirs := procs[e.host(t, ids[0])], procs[e.host(t, ids[1])]
			if mine == theirs {
				t.Fatal("two game sessions on one process")
			}
			ps := e.reserve(t, ids[1], "dave")

			if err := mine.AcceptPlayerSession(ps); err == nil {
				t.Error("a process accepted another game session's player")
			}
			if st := e.playerStatus(t, ps); st != types.PlayerSessionStatusReserved {
				t.Errorf("after the refused accept the player session is %s", st)
			}
			res, err := mine.DescribePlayerSessions(sdk.DescribePlayerSessionsRequest{GameSessionID: ids[1]})
			if err == nil {
				t.Errorf("a process read another game session's players: %+v", res)
			}
			res, err = mine.DescribePlayerSessions(sdk.DescribePlayerSessionsRequest{PlayerSessionID: ps})
			if err == nil && len(res.PlayerSessions) != 0 {
				t.Errorf("a process read another game session's player by id: %+v", res)
			}

			if err := theirs.AcceptPlayerSession(ps); err != nil {
				t.Fatalf("the hosting process accepting its player: %v", err)
			}
			if err := mine.RemovePlayerSession(ps); err == nil {
				t.Error("a process removed another game session's player")
			}
			if st := e.playerStatus(t, ps); st != types.PlayerSessionStatusActive {
				t.Errorf("after the refused remove the player session is %s", st)
			}
		})
	}
}
