package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// echo answers what it was handed, as JSON, with headers an API answer
// has and one of a single connection.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Amzn-Requestid", "req-1")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusTeapot)
	json.NewEncoder(w).Encode(map[string]any{
		"Method": r.Method, "URI": r.RequestURI, "Path": r.URL.Path, "Host": r.Host, "Remote": r.RemoteAddr,
		"Target": r.Header.Get("X-Amz-Target"), "Auth": r.Header.Get("Authorization"), "Length": r.ContentLength,
		"Body": string(body), "Relayed": IsRelayed(r.Context()), "TLS": r.TLS != nil, "Query": r.URL.RawQuery,
		"Signed": r.Header.Get(HeaderSignature) != "",
	})
}

// owner is a node's internal listener serving relays with h.
func owner(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(Handler(NewVerifier(secret, 0, nil), &connected{}, Relays{API: h, Process: h}, quiet))
	t.Cleanup(srv.Close)
	return srv
}

// The owner rebuilds the request the client sent the entry (target, Host,
// headers, body, remote address), marked as relayed, and the entry writes
// the owner's answer back unchanged but for the headers of one
// connection.
func TestRelayedAPIRequestIsRebuilt(t *testing.T) {
	srv := owner(t, http.HandlerFunc(echo))
	in := httptest.NewRequest(http.MethodPost, "/service/GameLift/operation/ListFleets?x=1", strings.NewReader("the body"))
	in.Host = "entry.example:9870"
	in.RemoteAddr = "192.0.2.7:5555"
	in.Header.Set("X-Amz-Target", "GameLift.ListFleets")
	in.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=k/20260101/us-west-2/gamelift/aws4_request, SignedHeaders=host, Signature=00")
	rec := httptest.NewRecorder()
	if err := NewClient(secret, nil).RelayAPI(rec, in, []byte("the body"), srv.URL); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusTeapot || rec.Header().Get("X-Amzn-Requestid") != "req-1" || rec.Header().Get("Connection") != "" ||
		rec.Header().Get(answeredHeader) != "" {
		t.Errorf("answer %d %v", rec.Code, rec.Header())
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Method": "POST", "URI": "/service/GameLift/operation/ListFleets?x=1", "Path": "/service/GameLift/operation/ListFleets",
		"Host": "entry.example:9870", "Remote": "192.0.2.7:5555", "Target": "GameLift.ListFleets", "Auth": in.Header.Get("Authorization"),
		"Length": float64(8), "Body": "the body", "Relayed": true, "TLS": false, "Query": "x=1", "Signed": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the owner was handed\n%v\nwant\n%v", got, want)
	}
}

// A relayed upgrade is served by the owner's process endpoint as the
// process's own: its path, query, Host, remote address and TLS; the
// bytes then go both ways through the entry.
func TestRelayedUpgradeIsPiped(t *testing.T) {
	seen := make(chan map[string]any, 1)
	srv := owner(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- map[string]any{"Path": r.URL.Path, "Query": r.URL.RawQuery, "Host": r.Host, "Remote": r.RemoteAddr, "TLS": r.TLS != nil,
			"Relayed": IsRelayed(r.Context()), "Signed": r.Header.Get(HeaderSignature) != ""}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			c.Write(ctx, typ, append([]byte("echo: "), b...))
		}
	}))
	c := NewClient(secret, nil)
	entry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = "lb.example:9870"
		if _, err := c.RelayProcess(r.Context(), w, r, srv.URL); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(entry.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(entry.URL, "http")+"/any/path?FleetId=f&pID=p%20q&Authorization=tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	got := <-seen
	if got["Path"] != "/any/path" || got["Query"] != "FleetId=f&pID=p%20q&Authorization=tok" || got["Host"] != "lb.example:9870" ||
		!strings.HasPrefix(got["Remote"].(string), "127.0.0.1:") || got["TLS"] != false || got["Relayed"] != true || got["Signed"] != false {
		t.Errorf("the owner was handed %v", got)
	}
	for _, msg := range []string{"one", "two"} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, b, err := ws.Read(ctx); err != nil || string(b) != "echo: "+msg {
			t.Fatalf("read %q %v", b, err)
		}
	}
}

// A node that does not take a relay (another secret; an older node with
// no relay path) has not answered: the entry writes nothing and says so.
// One that cannot be reached is skipped for a while.
func TestRelayNotTaken(t *testing.T) {
	for name, srv := range map[string]*httptest.Server{
		"another secret": httptest.NewServer(Handler(NewVerifier([]byte("some-other-node-secret"), 0, nil), &connected{},
			Relays{API: http.HandlerFunc(echo), Process: http.HandlerFunc(echo)}, quiet)),
		"no relay paths": httptest.NewServer(Handler(NewVerifier(secret, 0, nil), &connected{}, Relays{}, quiet)),
	} {
		t.Cleanup(srv.Close)
		in := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
		rec := httptest.NewRecorder()
		if err := NewClient(secret, nil).RelayAPI(rec, in, []byte("{}"), srv.URL); !errors.Is(err, ErrNotAnswered) || rec.Code != 200 || rec.Body.Len() != 0 {
			t.Errorf("%s, API: %v, wrote %d %q", name, err, rec.Code, rec.Body)
		}
		up := httptest.NewRequest(http.MethodGet, "/?FleetId=f", nil)
		if _, err := NewClient(secret, nil).RelayProcess(context.Background(), rec, up, srv.URL); !errors.Is(err, ErrNotAnswered) {
			t.Errorf("%s, process: %v", name, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	c := NewClient(secret, nil)
	in := httptest.NewRequest(http.MethodPost, "/", nil)
	if err := c.RelayAPI(httptest.NewRecorder(), in, nil, gone); err == nil || errors.Is(err, ErrPeerDown) {
		t.Errorf("first relay to a closed port: %v", err)
	}
	if _, err := c.RelayProcess(context.Background(), httptest.NewRecorder(), in, gone); !errors.Is(err, ErrPeerDown) {
		t.Errorf("second: %v, want ErrPeerDown", err)
	}
}

// The signature of a relayed upgrade covers its query: the process's
// credentials and the URL it reached cannot be changed on the way.
func TestRelayQueryIsSigned(t *testing.T) {
	srv := owner(t, http.HandlerFunc(echo))
	m := &processMeta{Path: "/", Query: "FleetId=f&Authorization=tok", Host: "lb:1"}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+ProcessPath+"?"+m.query(), nil)
	sign(req, secret, time.Now(), nil)
	m.Host = "evil:1"
	req.URL.RawQuery = m.query()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("altered query: %d", resp.StatusCode)
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	m := &apiMeta{URI: "/", Host: "h:1", Header: http.Header{"X-Amz-Target": {"GameLift.ListFleets"}}, ContentLength: 2, RemoteAddr: "r"}
	b, err := encodeAPI(m, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	got, body, err := decodeAPI(b)
	if err != nil || !reflect.DeepEqual(got, m) || string(body) != "{}" {
		t.Fatalf("%v %q %v", got, body, err)
	}
	huge := &apiMeta{URI: "/", Header: http.Header{"X": {strings.Repeat("a", maxMeta)}}}
	if _, err := encodeAPI(huge, nil); err == nil {
		t.Error("metadata past the cap was encoded")
	}
}

// FuzzDecodeAPI: any envelope is decoded or refused, never a crash, and
// what decodes encodes back to what decodes the same.
func FuzzDecodeAPI(f *testing.F) {
	good, _ := encodeAPI(&apiMeta{URI: "/", Host: "h", Header: http.Header{"A": {"b"}}, ContentLength: 2}, []byte("{}"))
	f.Add(good)
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte(`{"URI":"/"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, body, err := decodeAPI(b)
		if err != nil {
			return
		}
		again, err := encodeAPI(m, body)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", m, err)
		}
		m2, body2, err := decodeAPI(again)
		if err != nil || !reflect.DeepEqual(m, m2) || !bytes.Equal(body, body2) {
			t.Fatalf("round trip: %v %v %v", m, m2, err)
		}
	})
}

// FuzzProcessQuery: any relay query is read or refused, never a crash,
// and what is read writes back to the same.
func FuzzProcessQuery(f *testing.F) {
	f.Add((&processMeta{Path: "/", Query: "FleetId=f&pID=p", Host: "h:1", RemoteAddr: "r:2", TLS: true}).query())
	f.Add("path=%2F&path=%2F")
	f.Add("path=x;y")
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := parseProcessQuery(raw)
		if err != nil {
			return
		}
		m2, err := parseProcessQuery(m.query())
		if err != nil || *m != *m2 {
			t.Fatalf("round trip of %q: %v %v %v", raw, m, m2, err)
		}
	})
}
