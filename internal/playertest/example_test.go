package playertest

import (
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/exectest"
)

// TestExampleChatClient runs examples/chatclient as OS processes against
// the chat server: the first finds no room and creates one, the second
// finds it, joins and talks; both leave, and the game ends.
func TestExampleChatClient(t *testing.T) {
	e := start(t, nil)
	servers := e.launch(t, 1)
	first, firstIn, firstOut := e.chatClient(t, "alice")
	eventually(t, "alice in a room", func() (bool, string) { return strings.Contains(firstOut.String(), "joined "), firstOut.String() })
	gameSessionID := strings.Fields(strings.TrimPrefix(strings.SplitN(firstOut.String(), "\n", 2)[0], "joined "))[0]

	second, secondIn, secondOut := e.chatClient(t, "bob")
	io.WriteString(secondIn, "hello from bob\n")
	secondIn.Close()
	if err := second.Wait(); err != nil {
		t.Fatalf("bob's client: %v\n%s", err, secondOut.String())
	}
	if !strings.Contains(secondOut.String(), "joined "+gameSessionID) || !strings.Contains(secondOut.String(), "left") {
		t.Fatalf("bob's client did not join alice's room:\n%s", secondOut.String())
	}
	eventually(t, "alice hears bob", func() (bool, string) {
		return strings.Contains(firstOut.String(), ": hello from bob"), firstOut.String()
	})
	firstIn.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("alice's client: %v\n%s", err, firstOut.String())
	}
	e.waitSession(t, gameSessionID, types.GameSessionStatusTerminated)
	servers[0].waitExit(t)
}

// chatClient starts examples/chatclient as player.
func (e *env) chatClient(t *testing.T, player string) (*exec.Cmd, io.WriteCloser, *exectest.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(chatClientBinary, "-endpoint", e.players, "-fleet", e.fleet, "-token", e.tokenFor(t, player), "-max-players", "4")
	out := &exectest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, in, out
}
