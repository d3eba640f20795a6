// Command chatclient is a game client for the example chat server
// (examples/chat) built on Anylift's Go client library
// (github.com/anylift/anylift/sdk/client). It finds a chat room with a
// free seat through the player gateway (or creates one when there is
// none), joins it, sends each line of its standard input to the room and
// prints what the others say, and leaves at the end of its input.
//
//	chatclient -endpoint http://127.0.0.1:9872 -fleet fleet-... -token "$PLAYER_JWT"
//	chatclient -endpoint http://127.0.0.1:9872 -fleet fleet-... -dev-player alice   # gateway in dev mode
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/sdk/client"
)

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:9872", "the player gateway's URL")
	region := flag.String("region", "us-west-2", "the service's region")
	token := flag.String("token", os.Getenv("ANYLIFT_PLAYER_TOKEN"), "the player's token (ANYLIFT_PLAYER_TOKEN)")
	devPlayer := flag.String("dev-player", "", "the player id, for a gateway in dev mode (instead of -token)")
	fleet := flag.String("fleet", "", "the fleet whose rooms to search and create on")
	queue := flag.String("queue", "", "create rooms through this queue instead of directly on the fleet")
	maxPlayers := flag.Int("max-players", 8, "seats in a room this client creates")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *endpoint, *region, *token, *devPlayer, *fleet, *queue, *maxPlayers, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chatclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint, region, token, devPlayer, fleet, queue string, maxPlayers int, in io.Reader, out io.Writer) error {
	conn := &connection{out: out}
	cfg := client.Config{Region: region, Endpoint: endpoint, DevPlayerID: devPlayer,
		Hooks: client.Hooks{Connect: conn.open, Disconnect: conn.close}}
	if token != "" {
		cfg.PlayerToken = func(context.Context) (string, error) { return token, nil }
	}
	c, err := client.ConfigureClient(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	seat, err := join(ctx, c, fleet, queue, maxPlayers)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "joined %s as %s\n", seat.GameSessionID, seat.PlayerSessionID)
	lines := bufio.NewScanner(in)
	for lines.Scan() && ctx.Err() == nil {
		if err := conn.send(lines.Text()); err != nil {
			return err
		}
	}
	if err := c.LeaveSession(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	fmt.Fprintln(out, "left")
	return nil
}

// join takes a seat in a room with one free, or creates a room.
func join(ctx context.Context, c *client.Client, fleet, queue string, maxPlayers int) (client.Seat, error) {
	found, err := c.SearchSessions(ctx, client.SearchSessionsRequest{FleetID: fleet,
		Filter: "hasAvailablePlayerSessions=true", Sort: "playerSessionCount DESC"})
	if err != nil {
		return client.Seat{}, err
	}
	for _, s := range found.Sessions {
		seat, err := c.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: s.GameSessionID})
		if code := client.CodeOf(err); code == client.CodeGameSessionFull || code == client.CodeInvalidGameSessionStatus {
			continue // taken meanwhile: try the next room
		}
		return seat, err
	}
	var seat client.Seat
	if queue != "" {
		seat, err = c.CreateSessionOnQueue(ctx, client.CreateSessionOnQueueRequest{QueueName: queue, MaxPlayers: maxPlayers})
	} else {
		seat, err = c.CreateSession(ctx, client.CreateSessionRequest{FleetID: fleet, MaxPlayers: maxPlayers, Name: "chat room"})
	}
	if err != nil {
		return client.Seat{}, err
	}
	return c.JoinSession(ctx, client.JoinSessionRequest{Seat: &seat})
}

// connection is the TCP connection to the chat server: the library's
// connect and disconnect hooks.
type connection struct {
	out  io.Writer
	c    *net.TCPConn
	done chan struct{} // closed when the reader has stopped
	mu   sync.Mutex
}

// open presents the player session id; the server answers OK or ERR.
func (k *connection) open(ctx context.Context, seat client.Seat) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", seat.Address())
	if err != nil {
		return err
	}
	c := nc.(*net.TCPConn)
	fmt.Fprintf(c, "%s\n", seat.PlayerSessionID)
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "OK" {
		c.Close()
		return errors.Join(fmt.Errorf("the game server refused the seat: %s", strings.TrimSpace(line)), err)
	}
	c.SetReadDeadline(time.Time{})
	k.c, k.done = c, make(chan struct{})
	go k.read(r)
	return nil
}

// read prints what the room says until the server hangs up.
func (k *connection) read(r *bufio.Reader) {
	defer close(k.done)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			k.mu.Lock()
			fmt.Fprint(k.out, line)
			k.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (k *connection) send(line string) error {
	_, err := fmt.Fprintf(k.c, "%s\n", line)
	return err
}

// close says goodbye by closing the sending side and waits for the
// server to hang up, which it does once it has removed the player.
func (k *connection) close(ctx context.Context, _ client.Seat) error {
	k.c.CloseWrite()
	select {
	case <-k.done:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return k.c.Close()
}
