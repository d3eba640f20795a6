package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/matchmaking"
)

// A redirect the owner answers (a console form's 303) reaches the client
// as it is: the entry does not follow it.
func TestRelayedRedirectIsPassedBack(t *testing.T) {
	srv := owner(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/session?id=x", http.StatusSeeOther)
	}))
	in := httptest.NewRequest(http.MethodPost, "/console/session/terminate", strings.NewReader("id=x"))
	rec := httptest.NewRecorder()
	if err := NewClient(secret, nil).RelayAPI(rec, in, []byte("id=x"), srv.URL); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/session?id=x" {
		t.Errorf("answer %d to %q", rec.Code, rec.Header().Get("Location"))
	}
}

// A player's request reaches the owner's gateway, rebuilt and marked as
// relayed; Ask brings an answer back without writing it.
func TestPlayerRelayAndAsk(t *testing.T) {
	srv := httptest.NewServer(Handler(NewVerifier(secret, 0, nil), &connected{},
		Relays{API: http.HandlerFunc(echo), Player: http.HandlerFunc(echo)}, quiet))
	t.Cleanup(srv.Close)
	c := NewClient(secret, nil)
	in := httptest.NewRequest(http.MethodPost, "/v1/sessions/join", strings.NewReader(`{"GameSessionId":"g"}`))
	in.Header.Set("Authorization", "Bearer player-token")
	rec := httptest.NewRecorder()
	if err := c.RelayPlayer(rec, in, []byte(`{"GameSessionId":"g"}`), srv.URL, time.Minute); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusTeapot || got["Path"] != "/v1/sessions/join" || got["Body"] != `{"GameSessionId":"g"}` ||
		got["Relayed"] != true || got["Auth"] != "Bearer player-token" {
		t.Errorf("the owner's gateway was handed %v", got)
	}

	ask := httptest.NewRequest(http.MethodPost, "/anylift/v1/ListFaults", strings.NewReader("{}"))
	ans, err := c.Ask(context.Background(), ask, []byte("{}"), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ans.Body, &got); err != nil {
		t.Fatal(err)
	}
	if ans.Status != http.StatusTeapot || ans.Header.Get("X-Amzn-Requestid") != "req-1" || ans.Header.Get("Connection") != "" ||
		got["Path"] != "/anylift/v1/ListFaults" || got["Relayed"] != true {
		t.Errorf("asked: %d %v %v", ans.Status, ans.Header, got)
	}

	bare := httptest.NewServer(Handler(NewVerifier(secret, 0, nil), &connected{}, Relays{}, quiet))
	t.Cleanup(bare.Close)
	if err := c.RelayPlayer(httptest.NewRecorder(), in, nil, bare.URL, time.Minute); !errors.Is(err, ErrNotAnswered) {
		t.Errorf("a node without a gateway: %v", err)
	}
	if _, err := c.Ask(context.Background(), ask, nil, bare.URL); !errors.Is(err, ErrNotAnswered) {
		t.Errorf("asking a node without relays: %v", err)
	}
}

// A matchmaking call reaches the owner's service as it was sent; the
// owner's refusal is the caller's error, and an unsigned or forged call
// is refused before it runs.
func TestMatchCall(t *testing.T) {
	srv, local := receiver(t, nil)
	c := NewClient(secret, nil)
	call := &flexmatch.FleetMatchCall{Config: "arena", Tickets: []matchmaking.Placed{{TicketID: "t1", Team: "red"}, {TicketID: "bf", Team: "blue"}},
		Locations: []string{"custom-1"}}
	if err := c.Match(context.Background(), srv.URL, call); err != nil {
		t.Fatal(err)
	}
	if len(local.matches) != 1 || local.matches[0].Config != "arena" || len(local.matches[0].Tickets) != 2 ||
		local.matches[0].Tickets[1] != call.Tickets[1] || local.matches[0].Locations[0] != "custom-1" {
		t.Errorf("the owner ran %+v", local.matches)
	}
	if err := c.Match(context.Background(), srv.URL, &flexmatch.FleetMatchCall{Config: "refused", TimedOut: "t"}); err == nil ||
		!strings.Contains(err.Error(), "configuration refused") {
		t.Errorf("a call the owner refused: %v", err)
	}
	body := []byte(`{"Config":"arena","TimedOut":"t"}`)
	for name, h := range map[string]http.Header{
		"unsigned":     {},
		"wrong secret": signedHeaders([]byte("not-the-shared-secret!"), time.Now(), body),
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MatchPath, bytes.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	if len(local.matches) != 1 {
		t.Errorf("refused calls ran: %+v", local.matches)
	}
}

// FuzzMatchCall: any signed matchmaking call is run, refused by the
// owner or answered 400, never a crash.
func FuzzMatchCall(f *testing.F) {
	f.Add([]byte(`{"Config":"arena","Tickets":[{"TicketID":"t1","Team":"red"}],"Locations":["l"]}`))
	f.Add([]byte(`{"Config":"refused","TimedOut":"t"}`))
	f.Add([]byte(`{"Tickets":{}}`))
	f.Add([]byte(`null`))
	h := Handler(NewVerifier(secret, 0, nil), &connected{}, Relays{}, quiet)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, MatchPath, bytes.NewReader(body))
		sign(req, secret, time.Now(), body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent && rec.Code != http.StatusBadRequest && rec.Code != http.StatusConflict {
			t.Errorf("status %d for %q", rec.Code, body)
		}
	})
}
