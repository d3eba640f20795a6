package server_test

import (
	"testing"

	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/sdk/server"
)

// The package-level functions drive one Process per program, as in
// GameLift's Go SDK; the environment supplies the parameters.
func TestPackageLevelFunctions(t *testing.T) {
	env := start(t)
	wantType(t, server.ProcessReady(server.ProcessParameters{Port: 7777}), server.NotInitialized)
	t.Setenv(server.EnvWebSocketURL, env.URL)
	t.Setenv(server.EnvAuthToken, "token-1")
	t.Setenv(server.EnvHostID, "compute-1")
	t.Setenv(server.EnvFleetID, "fleet-1")
	t.Setenv(server.EnvProcessID, "proc-1")
	if err := server.InitSDKFromEnvironment(); err != nil {
		t.Fatal(err)
	}
	defer server.Destroy()
	wantType(t, server.InitSDK(server.ServerParameters{}), server.AlreadyInitialized)
	started := make(chan string, 1)
	if err := server.ProcessReady(server.ProcessParameters{Port: 7777,
		OnStartGameSession: func(gs server.GameSession) { started <- gs.GameSessionID }, OnProcessTerminate: func() {}}); err != nil {
		t.Fatal(err)
	}
	env.Backend.Wait(t, sdkwire.ActionHeartbeatServerProcess)
	startSession(t, env, "gs-1")
	<-started
	if err := server.ActivateGameSession(); err != nil {
		t.Fatal(err)
	}
	if id, _ := server.GetGameSessionID(); id != "gs-1" {
		t.Errorf("game session id %q", id)
	}
	if err := server.ProcessEnding(); err != nil {
		t.Fatal(err)
	}
	if err := server.Destroy(); err != nil {
		t.Fatal(err)
	}
	wantType(t, server.ActivateGameSession(), server.NotInitialized)
}
