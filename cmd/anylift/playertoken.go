package main

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

const playerTokenUsage = `usage: anylift player-token --player-id ID [flags]

Prints a player token (a JWT) that the player gateway accepts when it is
configured with the same key: --player-jwt-hs256-secret(-file), or the
private half of --player-jwt-public-key. For testing a game against a
gateway that checks tokens; in production the studio's own auth service
signs them. Each flag can also be set as ANYLIFT_<FLAG>, as for serve.`

// playerToken runs "anylift player-token": it signs a JWT whose subject is
// the player id, with the key the gateway is configured with, and prints it.
func playerToken(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("player-token", flag.ContinueOnError)
	playerID := fs.String("player-id", "", "the player id: the token's subject (required)")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	secret := fs.String("player-jwt-hs256-secret", "", "HS256 secret, as given to the gateway (at least 32 bytes)")
	secretFile := fs.String("player-jwt-hs256-secret-file", "", "file holding the HS256 secret, as given to the gateway")
	keyFile := fs.String("player-jwt-private-key", "", "PEM private key file (PKCS#8, PKCS#1 RSA): RSA signs RS256, Ed25519 signs EdDSA")
	issuer := fs.String("player-jwt-issuer", "", "iss claim (set it when the gateway requires one)")
	audience := fs.String("player-jwt-audience", "", "aud claim (set it when the gateway requires one)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, playerTokenUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && !set[f.Name] && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s: %w", envName(f.Name), err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}

	if *playerID == "" {
		return errors.New("--player-id is required")
	}
	if err := validPlayerID(*playerID); err != nil {
		return fmt.Errorf("--player-id: %w", err)
	}
	if *ttl <= 0 {
		return errors.New("--ttl must be positive")
	}
	var keys int
	for _, v := range []string{*secret, *secretFile, *keyFile} {
		if v != "" {
			keys++
		}
	}
	if keys != 1 {
		return errors.New("give exactly one key: --player-jwt-hs256-secret, --player-jwt-hs256-secret-file or --player-jwt-private-key")
	}

	var method jwt.SigningMethod
	var key any
	switch {
	case *secret != "" || *secretFile != "":
		b := []byte(*secret)
		if *secretFile != "" {
			raw, err := os.ReadFile(*secretFile)
			if err != nil {
				return fmt.Errorf("--player-jwt-hs256-secret-file: %w", err)
			}
			b = []byte(strings.TrimRight(string(raw), "\r\n"))
		}
		if len(b) < 32 {
			return errors.New("the HS256 secret must be at least 32 bytes, as the gateway requires")
		}
		method, key = jwt.SigningMethodHS256, b
	default:
		raw, err := os.ReadFile(*keyFile)
		if err != nil {
			return fmt.Errorf("--player-jwt-private-key: %w", err)
		}
		if method, key, err = privateKey(raw); err != nil {
			return fmt.Errorf("--player-jwt-private-key: %w", err)
		}
	}

	now := time.Now()
	claims := jwt.RegisteredClaims{
		Subject:   *playerID,
		Issuer:    *issuer,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(*ttl)),
	}
	if *audience != "" {
		claims.Audience = jwt.ClaimStrings{*audience}
	}
	token, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return fmt.Errorf("signing the token: %w", err)
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// privateKey reads a PEM private key and the one algorithm the gateway
// pairs with its public half.
func privateKey(data []byte) (jwt.SigningMethod, any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, nil, errors.New("no PEM block in the file")
	}
	var k any
	var err error
	if block.Type == "RSA PRIVATE KEY" {
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	} else {
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the private key: %w", err)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, nil, errors.New("the RSA key must be at least 2048 bits, as the gateway requires")
		}
		return jwt.SigningMethodRS256, k, nil
	case ed25519.PrivateKey:
		return jwt.SigningMethodEdDSA, k, nil
	}
	return nil, nil, fmt.Errorf("private keys of type %T are not supported (RSA or Ed25519)", k)
}

// validPlayerID applies the gateway's rule for a token's subject:
// 1 to 1024 characters of UTF-8 without control characters.
func validPlayerID(id string) error {
	if !utf8.ValidString(id) || utf8.RuneCountInString(id) > 1024 {
		return errors.New("1 to 1024 characters of valid UTF-8")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errors.New("no control characters")
		}
	}
	return nil
}
