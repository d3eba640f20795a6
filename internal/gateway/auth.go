package gateway

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// DevPlayerHeader names the player in dev mode, where tokens are not checked.
const DevPlayerHeader = "X-Anylift-Player-Id"

// maxTokenLen bounds the bearer token a request may carry.
const maxTokenLen = 8192

// maxPlayerIDLen is GameLift's PlayerId limit.
const maxPlayerIDLen = 1024

// AuthConfig says how players prove who they are: a JWT signed by the
// studio's own auth service with exactly one configured key, or (DevMode)
// no proof at all. The token's subject is the player id.
type AuthConfig struct {
	// HS256Secret pins HS256 with this shared secret.
	HS256Secret []byte
	// PublicKeyPEM pins RS256 (an RSA key) or EdDSA (an Ed25519 key): a
	// PEM "PUBLIC KEY" block.
	PublicKeyPEM []byte
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// DevMode takes the player id from the X-Anylift-Player-Id header.
	DevMode bool
}

// authenticator checks a request's player credentials. It never touches
// the store: a forged token stops here.
type authenticator struct {
	dev    bool
	key    any
	parser *jwt.Parser
}

func newAuthenticator(c AuthConfig, now func() time.Time) (*authenticator, error) {
	a := &authenticator{dev: c.DevMode}
	var alg string
	switch {
	case len(c.HS256Secret) > 0 && len(c.PublicKeyPEM) > 0:
		return nil, errors.New("player gateway: configure either an HS256 secret or a public key, not both")
	case len(c.HS256Secret) > 0:
		if len(c.HS256Secret) < 32 {
			return nil, errors.New("player gateway: the HS256 secret must be at least 32 bytes")
		}
		alg, a.key = jwt.SigningMethodHS256.Alg(), c.HS256Secret
	case len(c.PublicKeyPEM) > 0:
		var err error
		if alg, a.key, err = publicKey(c.PublicKeyPEM); err != nil {
			return nil, err
		}
	case !c.DevMode:
		return nil, errors.New("player gateway: configure an HS256 secret or a public key for player tokens, or dev mode")
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{alg}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(now), jwt.WithLeeway(5 * time.Second)}
	if c.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		opts = append(opts, jwt.WithAudience(c.Audience))
	}
	a.parser = jwt.NewParser(opts...)
	return a, nil
}

// publicKey reads a PEM public key and the one algorithm it may verify.
func publicKey(data []byte) (string, any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return "", nil, errors.New("player gateway: the public key file holds no PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return "", nil, fmt.Errorf("player gateway: reading the public key: %w", err)
	}
	switch k := k.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", nil, errors.New("player gateway: the RSA public key must be at least 2048 bits")
		}
		return jwt.SigningMethodRS256.Alg(), k, nil
	case ed25519.PublicKey:
		return jwt.SigningMethodEdDSA.Alg(), k, nil
	}
	return "", nil, fmt.Errorf("player gateway: public keys of type %T are not supported (RSA or Ed25519)", k)
}

// player returns the authenticated player id of r.
func (a *authenticator) player(r *http.Request) (string, error) {
	if a.dev && a.key == nil {
		return devPlayer(r.Header.Get(DevPlayerHeader))
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", fail(http.StatusUnauthorized, CodeMissingToken, "A player token is required: send Authorization: Bearer <token>")
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", fail(http.StatusUnauthorized, CodeMissingToken, "The Authorization header must be: Bearer <token>")
	}
	return a.verify(strings.TrimSpace(token))
}

// verify checks a token's signature, algorithm, expiry and subject.
func (a *authenticator) verify(token string) (string, error) {
	if len(token) > maxTokenLen {
		return "", fail(http.StatusUnauthorized, CodeInvalidToken, "The player token is too long")
	}
	var claims jwt.RegisteredClaims
	_, err := a.parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return a.key, nil })
	if err != nil {
		return "", fail(http.StatusUnauthorized, CodeInvalidToken, tokenProblem(err))
	}
	if err := checkPlayerID(claims.Subject); err != nil {
		return "", fail(http.StatusUnauthorized, CodeInvalidToken, "The player token's subject must be a player id: "+err.Error())
	}
	return claims.Subject, nil
}

// tokenProblem words why a token was refused, without echoing it.
func tokenProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "The player token has expired; sign in again"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "The player token is not valid yet"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "The player token lacks a required claim (exp)"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer), errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "The player token was issued for another service"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "The player token is malformed"
	}
	return "The player token's signature is not valid"
}

func devPlayer(id string) (string, error) {
	if id == "" {
		return "", fail(http.StatusUnauthorized, CodeMissingToken, "Dev mode: name the player in the "+DevPlayerHeader+" header")
	}
	if err := checkPlayerID(id); err != nil {
		return "", fail(http.StatusUnauthorized, CodeInvalidToken, "Dev mode: "+err.Error())
	}
	return id, nil
}

// checkPlayerID applies GameLift's PlayerId rule: 1 to 1024 characters;
// control characters are refused too.
func checkPlayerID(id string) error {
	if id == "" || !utf8.ValidString(id) || utf8.RuneCountInString(id) > maxPlayerIDLen {
		return errors.New("1 to 1024 characters of valid UTF-8")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errors.New("no control characters")
		}
	}
	return nil
}
