package sdkserver_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkserver/sdktest"
	"github.com/coder/websocket"
)

func dial(t *testing.T, url string, client *http.Client) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
}

// roundTrip sends a heartbeat-free request and returns the answer.
func roundTrip(t *testing.T, c *websocket.Conn, frame string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if typ != websocket.MessageText {
		t.Errorf("answer sent as %v, want a text frame", typ)
	}
	return string(b)
}

func TestHandshakeReadsTheQueryLeniently(t *testing.T) {
	env := sdktest.Start(t, sdkserver.Config{})
	env.Backend.AllowToken("fleet-1", "compute-1", "tok+/=&x")
	env.Backend.AllowToken("fleet-2", "compute-2", "tok-1")
	queries := map[string]string{
		// Go: sorted keys, percent-encoded values, path "/".
		"go": "/?Authorization=tok%2B%2F%3D%26x&ComputeId=compute-1&FleetId=fleet-1&IdempotencyToken=9f449d70&pID=proc-1&sdkLanguage=Go&sdkVersion=5.6.0",
		// C#: its own order, nothing encoded, a trailing path.
		"csharp": "/some/path?ComputeId=compute-2&FleetId=fleet-2&pID=proc-2&sdkLanguage=CSharp&sdkVersion=5.4.0&IdempotencyToken=a-b&Authorization=tok-1",
		// C++: a trailing slash appended to the endpoint, std::map order.
		"cpp": "/some/path/?Authorization=tok-1&ComputeId=compute-2&FleetId=fleet-2&IdempotencyToken=x&pID=proc-3&sdkLanguage=Cpp&sdkVersion=5.4.0",
	}
	for name, q := range queries {
		c, _, err := dial(t, env.URL+q, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := roundTrip(t, c, activate)
		if got != `{"Action":"ActivateServerProcess","RequestId":"r-act","StatusCode":200}` {
			t.Errorf("%s: %s", name, got)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
}

func TestHandshakeRefusedWith403BeforeUpgrade(t *testing.T) {
	env := sdktest.Start(t, sdkserver.Config{})
	env.Backend.AllowToken("fleet-1", "compute-1", "good")
	for name, q := range map[string]string{
		"wrong token":   "/?Authorization=bad&ComputeId=compute-1&FleetId=fleet-1&pID=p",
		"other fleet":   "/?Authorization=good&ComputeId=compute-1&FleetId=fleet-2&pID=p",
		"other compute": "/?Authorization=good&ComputeId=compute-2&FleetId=fleet-1&pID=p",
		"no token":      "/?ComputeId=compute-1&FleetId=fleet-1&pID=p",
		"no pID":        "/?Authorization=good&ComputeId=compute-1&FleetId=fleet-1",
	} {
		_, resp, err := dial(t, env.URL+q, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v %v", name, resp, err)
		}
	}
	if len(env.Backend.Events) != 0 {
		t.Error("a refused handshake reached the backend")
	}
}

// Config.Refuse answers a refused handshake in place of 403, when it
// says it did; otherwise the refusal stays 403.
func TestHandshakeRefusalAnsweredByRefuse(t *testing.T) {
	env := sdktest.Start(t, sdkserver.Config{Refuse: func(w http.ResponseWriter, r *http.Request, err error) bool {
		if r.URL.Query().Get("pID") != "retry" {
			return false
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "retry: "+err.Error(), http.StatusInternalServerError)
		return true
	}})
	for pid, want := range map[string]int{"retry": http.StatusInternalServerError, "other": http.StatusForbidden} {
		_, resp, err := dial(t, env.URL+"/?Authorization=bad&ComputeId=compute-1&FleetId=fleet-1&pID="+pid, nil)
		if err == nil || resp == nil || resp.StatusCode != want {
			t.Errorf("%s: %v %v, want %d", pid, resp, err, want)
		}
	}
}

func TestIsUpgrade(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	if sdkserver.IsUpgrade(r) {
		t.Error("plain GET taken for an upgrade")
	}
	r.Header.Set("Connection", "keep-alive, Upgrade")
	r.Header.Set("Upgrade", "WebSocket")
	if !sdkserver.IsUpgrade(r) {
		t.Error("upgrade not recognised")
	}
}

func TestSelfSignedCertificateIsGeneratedOnceAndServesTLS(t *testing.T) {
	dir := t.TempDir()
	cert, err := sdkserver.LoadCertificate("", "", dir, "game-host-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := sdkserver.LoadCertificate("", "", dir, "game-host-1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cert.Certificate[0], again.Certificate[0]) {
		t.Error("certificate regenerated on the second start")
	}
	x, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := x.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	if err := x.VerifyHostname("localhost"); err != nil {
		t.Error(err)
	}
	if err := x.VerifyHostname("game-host-1"); err != nil {
		t.Error(err)
	}
	if st, err := os.Stat(filepath.Join(dir, sdkserver.GeneratedKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", st, err)
	}
	explicit, err := sdkserver.LoadCertificate(filepath.Join(dir, sdkserver.GeneratedCertFile), filepath.Join(dir, sdkserver.GeneratedKeyFile), "", "")
	if err != nil || !bytes.Equal(explicit.Certificate[0], cert.Certificate[0]) {
		t.Errorf("explicit files: %v", err)
	}

	b := sdktest.NewBackend()
	b.AllowToken("fleet-1", "compute-1", "tok")
	s := sdkserver.New(sdkserver.Config{Auth: b, Backend: b})
	hs := httptest.NewUnstartedServer(s)
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	hs.StartTLS()
	t.Cleanup(func() { s.Close(); hs.Close() })
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := "wss" + hs.URL[len("https"):] + "/?Authorization=tok&ComputeId=compute-1&FleetId=fleet-1&pID=p1&sdkLanguage=Cpp&sdkVersion=5.4.0"
	c, _, err := dial(t, url, client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if got := roundTrip(t, c, activate); got != `{"Action":"ActivateServerProcess","RequestId":"r-act","StatusCode":200}` {
		t.Errorf("over TLS: %s", got)
	}
}
