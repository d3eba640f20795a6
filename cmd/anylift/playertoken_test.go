package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func mintToken(t *testing.T, args []string, env map[string]string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"player-token"}, args...), func(k string) string { return env[k] }, &out, io.Discard); err != nil {
		t.Fatalf("player-token %v: %v", args, err)
	}
	return strings.TrimSpace(out.String())
}

// TestBinaryGatewayAcceptsPlayerToken: a token printed by "anylift
// player-token" with the gateway's HS256 secret file is accepted by the
// real gateway of "anylift serve"; one signed with another secret is not.
func TestBinaryGatewayAcceptsPlayerToken(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	secret := writeFile(t, "player-secret", strings.Repeat("s", 40)+"\n")
	gateway := serveGateway(ctx, t, bin, "--player-jwt-hs256-secret-file", secret, "--player-allowed-fleets", "*")

	search := func(token string) (int, string) {
		req, _ := http.NewRequest("POST", gateway+"/v1/sessions/search", strings.NewReader(`{"FleetId":"fleet-00000000-0000-0000-0000-000000000000"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	good := mintToken(t, []string{"--player-id", "p1", "--player-jwt-hs256-secret-file", secret}, nil)
	if code, body := search(good); code == http.StatusUnauthorized || strings.Contains(body, "Token") {
		t.Fatalf("a minted token was refused: %d %s", code, body)
	}
	// The secret may come from the environment, as for serve.
	fromEnv := mintToken(t, []string{"--player-id", "p2"}, map[string]string{"ANYLIFT_PLAYER_JWT_HS256_SECRET": strings.Repeat("s", 40)})
	if code, body := search(fromEnv); code == http.StatusUnauthorized {
		t.Fatalf("a token minted with the secret from the environment was refused: %d %s", code, body)
	}
	bad := mintToken(t, []string{"--player-id", "p1", "--player-jwt-hs256-secret", strings.Repeat("x", 40)}, nil)
	if code, body := search(bad); code != http.StatusUnauthorized || !strings.Contains(body, `"Code":"InvalidToken"`) {
		t.Fatalf("a token with another secret: %d %s", code, body)
	}
}

// TestPlayerTokenKeys: private keys sign with the one algorithm the gateway
// pairs with their public half, and the claims are those it checks.
func TestPlayerTokenKeys(t *testing.T) {
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := func(k any) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaPriv)}))
	for _, tc := range []struct {
		name, pem, alg string
		pub            any
	}{
		{"ed25519", pkcs8(edPriv), "EdDSA", edPub},
		{"rsa-pkcs8", pkcs8(rsaPriv), "RS256", &rsaPriv.PublicKey},
		{"rsa-pkcs1", pkcs1, "RS256", &rsaPriv.PublicKey},
	} {
		file := writeFile(t, tc.name+".pem", tc.pem)
		token := mintToken(t, []string{"--player-id", "player one", "--player-jwt-private-key", file,
			"--ttl", "10m", "--player-jwt-issuer", "studio", "--player-jwt-audience", "game"}, nil)
		var claims jwt.RegisteredClaims
		_, err := jwt.NewParser(jwt.WithValidMethods([]string{tc.alg}), jwt.WithExpirationRequired(),
			jwt.WithIssuer("studio"), jwt.WithAudience("game")).
			ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return tc.pub, nil })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if claims.Subject != "player one" {
			t.Errorf("%s: subject %q", tc.name, claims.Subject)
		}
		if left := time.Until(claims.ExpiresAt.Time); left <= 9*time.Minute || left > 10*time.Minute {
			t.Errorf("%s: expires in %v, want 10m", tc.name, left)
		}
	}
}

// TestPlayerTokenRefusesMistakes: each mistake names what to fix, and
// nothing is printed.
func TestPlayerTokenRefusesMistakes(t *testing.T) {
	secret := strings.Repeat("s", 32)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallFile := writeFile(t, "small.pem", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(small)})))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--player-jwt-hs256-secret", secret}, "--player-id is required"},
		{[]string{"--player-id", "a\x01b", "--player-jwt-hs256-secret", secret}, "no control characters"},
		{[]string{"--player-id", strings.Repeat("p", 1025), "--player-jwt-hs256-secret", secret}, "1 to 1024 characters"},
		{[]string{"--player-id", "p"}, "give exactly one key"},
		{[]string{"--player-id", "p", "--player-jwt-hs256-secret", secret, "--player-jwt-private-key", smallFile}, "give exactly one key"},
		{[]string{"--player-id", "p", "--player-jwt-hs256-secret", "short"}, "at least 32 bytes"},
		{[]string{"--player-id", "p", "--player-jwt-hs256-secret", secret, "--ttl", "0s"}, "--ttl must be positive"},
		{[]string{"--player-id", "p", "--player-jwt-private-key", smallFile}, "at least 2048 bits"},
		{[]string{"--player-id", "p", "--player-jwt-private-key", writeFile(t, "junk.pem", "junk")}, "no PEM block"},
		{[]string{"--player-id", "p", "--player-jwt-hs256-secret-file", "/nonexistent/secret"}, "--player-jwt-hs256-secret-file"},
		{[]string{"--player-id", "p", "--player-jwt-hs256-secret", secret, "stray"}, `unexpected argument "stray"`},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"player-token"}, tc.args...), func(string) string { return "" }, &out, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%q printed %q", tc.args, out.String())
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"player-token", "-h"}, func(string) string { return "" }, &out, io.Discard); err != nil || !strings.Contains(out.String(), "usage: anylift player-token") {
		t.Errorf("player-token -h: %v\n%s", err, out.String())
	}
}
