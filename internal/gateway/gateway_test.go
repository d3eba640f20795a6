package gateway

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

// untouchable is a control layer that counts calls: the tests here check
// that refused requests never reach it.
type untouchable struct{ calls atomic.Int32 }

func (u *untouchable) hit() error { u.calls.Add(1); return game.Errorf(game.NotFound, "nothing here") }

func (u *untouchable) CreateGameSession(context.Context, *wire.CreateGameSessionInput) (*wire.CreateGameSessionOutput, error) {
	return nil, u.hit()
}
func (u *untouchable) DescribeGameSessions(context.Context, *wire.DescribeGameSessionsInput) (*wire.DescribeGameSessionsOutput, error) {
	return nil, u.hit()
}
func (u *untouchable) SearchGameSessions(context.Context, *wire.SearchGameSessionsInput) (*wire.SearchGameSessionsOutput, error) {
	u.calls.Add(1)
	return &wire.SearchGameSessionsOutput{}, nil
}
func (u *untouchable) CreatePlayerSession(context.Context, *wire.CreatePlayerSessionInput) (*wire.CreatePlayerSessionOutput, error) {
	return nil, u.hit()
}
func (u *untouchable) DescribePlayerSessions(context.Context, *wire.DescribePlayerSessionsInput) (*wire.DescribePlayerSessionsOutput, error) {
	return nil, u.hit()
}
func (u *untouchable) RemovePlayerSession(context.Context, string, string) (*game.PlayerSession, error) {
	return nil, u.hit()
}
func (u *untouchable) ResolveAlias(context.Context, *wire.ResolveAliasInput) (*wire.ResolveAliasOutput, error) {
	return nil, u.hit()
}
func (u *untouchable) DescribeFleetLocationAttributes(context.Context, *wire.DescribeFleetLocationAttributesInput) (*wire.DescribeFleetLocationAttributesOutput, error) {
	return nil, u.hit()
}

var testSecret = []byte("gateway-unit-test-secret-0123456789abcdef")

func newTest(t *testing.T, cfg Config) (*Gateway, *untouchable) {
	t.Helper()
	u := &untouchable{}
	if cfg.Auth.HS256Secret == nil && cfg.Auth.PublicKeyPEM == nil && !cfg.Auth.DevMode {
		cfg.Auth.HS256Secret = testSecret
	}
	cfg.AllowedFleets = []string{"*"}
	g, err := New(u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, u
}

func request(g *Gateway, method, path string, header map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	g.Handler().ServeHTTP(w, r)
	return w
}

func codeOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e playerwire.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("not a JSON error: %q", w.Body.String())
	}
	return e.Code
}

func hs(t *testing.T, sub string, exp time.Time) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: sub, ExpiresAt: jwt.NewNumericDate(exp)}).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestForgedTokensNeverReachTheStore: every refused credential stops
// before the control layer is called.
func TestForgedTokensNeverReachTheStore(t *testing.T) {
	g, u := newTest(t, Config{})
	bad := []string{"", "Bearer", "Basic abc", "Bearer x.y.z", "Bearer " + hs(t, "p", time.Now().Add(-time.Hour)),
		"Bearer " + strings.Repeat("a", maxTokenLen+1)}
	for _, h := range bad {
		w := request(g, "POST", playerwire.PathSearch, map[string]string{"Authorization": h}, `{"FleetId":"fleet-1"}`)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%q: status %d", h, w.Code)
		}
	}
	if n := u.calls.Load(); n != 0 {
		t.Fatalf("refused requests reached the control layer %d times", n)
	}
	w := request(g, "POST", playerwire.PathSearch, map[string]string{"Authorization": "Bearer " + hs(t, "p", time.Now().Add(time.Hour))}, `{"FleetId":"fleet-1"}`)
	if w.Code != http.StatusOK || u.calls.Load() != 1 {
		t.Fatalf("a valid token: status %d, %d calls: %s", w.Code, u.calls.Load(), w.Body)
	}
}

// TestPublicKeyAlgorithmsArePinned: an RSA key takes RS256 only, an
// Ed25519 key EdDSA only; an HS256 token signed with the public key's
// bytes (the classic confusion attack) is refused.
func TestPublicKeyAlgorithmsArePinned(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	epub, epriv, _ := ed25519.GenerateKey(rand.Reader)
	for name, c := range map[string]struct {
		pub  any
		good string
		bad  string
	}{
		"rsa": {&rk.PublicKey, signWith(t, jwt.SigningMethodRS256, rk), signWith(t, jwt.SigningMethodEdDSA, epriv)},
		"ed":  {epub, signWith(t, jwt.SigningMethodEdDSA, epriv), signWith(t, jwt.SigningMethodRS256, rk)},
	} {
		t.Run(name, func(t *testing.T) {
			der, err := x509.MarshalPKIXPublicKey(c.pub)
			if err != nil {
				t.Fatal(err)
			}
			pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
			g, _ := newTest(t, Config{Auth: AuthConfig{PublicKeyPEM: pemKey}})
			confused := signWith(t, jwt.SigningMethodHS256, pemKey)
			for tok, want := range map[string]int{c.good: http.StatusOK, c.bad: http.StatusUnauthorized, confused: http.StatusUnauthorized} {
				w := request(g, "POST", playerwire.PathSearch, map[string]string{"Authorization": "Bearer " + tok}, `{"FleetId":"fleet-1"}`)
				if w.Code != want {
					t.Errorf("status %d, want %d: %s", w.Code, want, w.Body)
				}
			}
		})
	}
}

func signWith(t *testing.T, m jwt.SigningMethod, key any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, jwt.RegisteredClaims{Subject: "p", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBadKeyConfigurations(t *testing.T) {
	for name, a := range map[string]AuthConfig{
		"nothing":      {},
		"short secret": {HS256Secret: []byte("short")},
		"both":         {HS256Secret: testSecret, PublicKeyPEM: []byte("x")},
		"not pem":      {PublicKeyPEM: []byte("not a key")},
	} {
		if _, err := New(&untouchable{}, Config{Auth: a}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRateLimitPerPlayer: a player over its burst is RateLimited until
// the clock refills the bucket; another player is unaffected.
func TestRateLimitPerPlayer(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	g, _ := newTest(t, Config{Auth: AuthConfig{DevMode: true}, RatePerSecond: 1, Burst: 2, Now: clock})
	call := func(player string) int {
		return request(g, "POST", playerwire.PathSearch, map[string]string{DevPlayerHeader: player}, `{"FleetId":"fleet-1"}`).Code
	}
	if call("a") != 200 || call("a") != 200 {
		t.Fatal("burst refused")
	}
	w := request(g, "POST", playerwire.PathSearch, map[string]string{DevPlayerHeader: "a"}, `{"FleetId":"fleet-1"}`)
	if w.Code != http.StatusTooManyRequests || codeOf(t, w) != CodeRateLimited || w.Header().Get("Retry-After") == "" {
		t.Fatalf("over the burst: %d %s", w.Code, w.Body)
	}
	if call("b") != 200 {
		t.Fatal("another player was limited")
	}
	now = now.Add(time.Second)
	if call("a") != 200 {
		t.Fatal("the bucket did not refill")
	}
}

func TestLimiterEvictsIdlest(t *testing.T) {
	l := newLimiter(1, 1, 3, time.Now)
	for _, p := range []string{"a", "b", "c", "a", "d"} {
		l.allow(p)
	}
	if l.size() != 3 {
		t.Fatalf("size %d", l.size())
	}
	if _, ok := l.byID["b"]; ok {
		t.Fatal("b, the idlest, was kept")
	}
}

func TestCORS(t *testing.T) {
	g, _ := newTest(t, Config{Auth: AuthConfig{DevMode: true}, CORSOrigins: []string{"https://game.example"}})
	w := request(g, "OPTIONS", playerwire.PathCreate, map[string]string{"Origin": "https://game.example"}, "")
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://game.example" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
	w = request(g, "OPTIONS", playerwire.PathCreate, map[string]string{"Origin": "https://evil.example"}, "")
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("an unlisted origin was allowed")
	}
}

func TestMethodsAndPaths(t *testing.T) {
	g, u := newTest(t, Config{Auth: AuthConfig{DevMode: true}})
	if w := request(g, "GET", playerwire.PathSearch, nil, ""); w.Code != http.StatusMethodNotAllowed || codeOf(t, w) != CodeInvalidRequest {
		t.Fatalf("GET: %d", w.Code)
	}
	for _, admin := range []string{"/", "/service/GameLift/operation/DeleteFleet", "/events", "/healthz"} {
		if w := request(g, "POST", admin, map[string]string{"X-Amz-Target": "GameLift.DeleteFleet"}, "{}"); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d", admin, w.Code)
		}
	}
	if u.calls.Load() != 0 {
		t.Fatal("an unknown path reached the control layer")
	}
}
