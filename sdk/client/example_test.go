package client_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/anylift/anylift/sdk/client"
)

// A game client finds a session through the player gateway, joins it (the
// connect hook opens the game's own connection) and later leaves.
func Example() {
	var conn net.Conn
	c, err := client.ConfigureClient(client.Config{
		Region:      "us-east-1",
		Endpoint:    "http://127.0.0.1:9872",
		PlayerToken: func(context.Context) (string, error) { return "<the player's JWT>", nil },
		Hooks: client.Hooks{
			Connect: func(ctx context.Context, seat client.Seat) (err error) {
				var d net.Dialer
				if conn, err = d.DialContext(ctx, "tcp", seat.Address()); err == nil {
					_, err = fmt.Fprintln(conn, seat.PlayerSessionID) // the game server checks it
				}
				return err
			},
			Disconnect: func(context.Context, client.Seat) error { return conn.Close() },
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	found, err := c.SearchSessions(ctx, client.SearchSessionsRequest{FleetID: "fleet-123", Filter: "hasAvailablePlayerSessions=true"})
	if err != nil || len(found.Sessions) == 0 {
		log.Fatal("no session: ", err)
	}
	if _, err := c.JoinSession(ctx, client.JoinSessionRequest{GameSessionID: found.Sessions[0].GameSessionID}); err != nil {
		if client.CodeOf(err) == client.CodeGameSessionFull {
			log.Print("full; try another session")
		}
		log.Fatal(err)
	}
	// ... play ...
	if err := c.LeaveSession(ctx); err != nil {
		log.Print(err)
	}
}
