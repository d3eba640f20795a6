package sdkserver

import (
	"crypto/tls"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestEndpointOf(t *testing.T) {
	for _, c := range []struct {
		host string
		tls  bool
		want string
	}{
		{"127.0.0.1:9870", false, "ws://127.0.0.1:9870"},
		{"127.0.0.1:9870", true, "wss://127.0.0.1:9870"},
		{"games.example.com", true, "wss://games.example.com"},
		{"[::1]:9871", true, "wss://[::1]:9871"},
		{"evil.example/path", false, ""},
		{"host:99999", false, ""},
		{"user@host:1", false, ""},
		{"", false, ""},
		{strings.Repeat("a", 300), false, ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = c.host
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := endpointOf(r); got != c.want {
			t.Errorf("Host %q, TLS %v: %q, want %q", c.host, c.tls, got, c.want)
		}
	}
}

// FuzzEndpointOf: whatever Host a client sends, the endpoint is empty or
// a ws:// or wss:// URL whose host is exactly that Host, with no path,
// user, query or fragment.
func FuzzEndpointOf(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9870", "[::1]:1", "a.b", "a/b", "a?b", "a#b", "a@b", "[::1]", "::1", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		got := endpointOf(r)
		if got == "" {
			return
		}
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "ws" || u.Host != host || u.Path != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("Host %q gave %q (%+v, %v)", host, got, u, err)
		}
	})
}
