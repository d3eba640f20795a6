package client

import (
	"context"
	"testing"
)

func TestRegionNames(t *testing.T) {
	for region, ok := range map[string]bool{
		"us-east-1": true, "ap-southeast-2": true, "us-gov-west-1": true, "eu-central-1": true,
		"": false, "us-east": false, "US-EAST-1": false, "us east 1": false, "us-east-1a": false, "u-east-1": false,
	} {
		_, err := ConfigureClient(Config{Region: region, Endpoint: "http://127.0.0.1:9872", DevPlayerID: "p"})
		if (err == nil) != ok {
			t.Errorf("%q: %v", region, err)
		}
	}
}

// TestClosedClient: after Close, asynchronous calls report ClientClosed
// to their handler and start nothing.
func TestClosedClient(t *testing.T) {
	got := make(chan error, 1)
	c, err := ConfigureClient(Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1", DevPlayerID: "p",
		Notifications: Notifications{OnSearchSessions: func(_ SearchSessionsResult, err error) { got <- err }}})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.SearchSessionsAsync(SearchSessionsRequest{FleetID: "fleet-1"})
	if err := <-got; CodeOf(err) != CodeClosed {
		t.Fatalf("got %v", err)
	}
	if err := c.LeaveSession(context.Background()); CodeOf(err) != CodeNotJoined {
		t.Fatalf("leave without a session: %v", err)
	}
	if _, err := c.CreateSession(context.Background(), CreateSessionRequest{}); CodeOf(err) != CodeInvalidParameter {
		t.Fatalf("create without a fleet: %v", err)
	}
}
