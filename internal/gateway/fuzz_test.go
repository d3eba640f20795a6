package gateway

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzDecoders: no body crashes a decoder, and every refusal is a typed
// InvalidRequest that does not echo the input at length.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"FleetId":"f","MaximumPlayerSessionCount":2}`, `{"QueueName":"q"}`,
		`{"FleetId":"f","AliasId":"a"}`, `{"GameSessionId":"arn:aws:gamelift:x::gamesession/f/l/g"}`, `[]`, `{"x":1}`,
		`{"Limit":"3"}`, `{"FleetId":"f"} {}`, `{"GameProperties":[{"Key":1}]}`, "\xff", `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, dec := range []func() error{
			func() error { _, err := decodeCreate(bytes.NewReader(data)); return err },
			func() error { _, err := decodeSearch(bytes.NewReader(data)); return err },
			func() error { _, err := decodeJoin(bytes.NewReader(data)); return err },
			func() error { _, err := decodeLeave(bytes.NewReader(data)); return err },
		} {
			err := dec()
			if err == nil {
				continue
			}
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalidRequest || len(e.Message) > 300 {
				t.Fatalf("decoder error %T %v", err, err)
			}
		}
	})
}

// FuzzTokens: no token crashes verification, and none but a well-signed
// unexpired one with a subject passes.
func FuzzTokens(f *testing.F) {
	good, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "p",
		ExpiresAt: jwt.NewNumericDate(time.Unix(2e9, 0))}).SignedString(testSecret)
	for _, s := range []string{good, "", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", good + "x", good[:len(good)-3]} {
		f.Add(s)
	}
	a, err := newAuthenticator(AuthConfig{HS256Secret: testSecret}, func() time.Time { return time.Unix(1e9, 0) })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		p, err := a.verify(token)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != http.StatusUnauthorized || e.Code != CodeInvalidToken {
				t.Fatalf("verify error %T %v", err, err)
			}
			return
		}
		if token != good && p == "" {
			t.Fatalf("token %q passed with no subject", token)
		}
	})
}
