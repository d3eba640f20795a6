package server_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
)

// TestBusyPortSaysWhatToDo: a taken port is refused with the flag, the
// address and the likely cause, and leaves the data directory free for
// the next start.
func TestBusyPortSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg := server.Config{Listen: taken.Addr().String(), DataDir: dir, Credentials: map[string]string{apitest.AccessKey: apitest.SecretKey}}
	_, err = server.Start(context.Background(), cfg)
	want := "--listen " + taken.Addr().String() + ": the address is in use, most likely by another anylift already running"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("start on a taken port: %v; want %q", err, want)
	}
	apitest.Start(t, func(c *server.Config) { c.DataDir = dir })
}
