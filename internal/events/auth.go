package events

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Auth decides who may read the event stream: the admin API's own
// credentials, presented either as a SigV4-signed GET (as the AWS SDKs
// sign any request) or as HTTP Basic with the access key id as user name
// and the secret key as password (for curl and EventSource polyfills).
type Auth struct {
	// Credentials maps access key ids to secret keys.
	Credentials map[string]string
	// SigV4 verifies a SigV4-signed request (the API's verifier); nil
	// refuses SigV4.
	SigV4 func(*http.Request) error
	// Open lets every request in, with or without credentials. Local
	// development only (--insecure-any-credentials).
	Open bool
}

var (
	errNoCredentials  = errors.New("credentials required: HTTP Basic (access key id, secret key) or a SigV4-signed request")
	errBadCredentials = errors.New("the credentials are not valid")
)

// check authenticates r. Secrets are compared in constant time (over
// their SHA-256, so lengths do not leak either).
func (a *Auth) check(r *http.Request) error {
	if a.Open {
		return nil
	}
	h := r.Header.Get("Authorization")
	if strings.HasPrefix(h, "AWS4-HMAC-SHA256 ") {
		if a.SigV4 == nil {
			return errBadCredentials
		}
		if err := a.SigV4(r); err != nil {
			return errBadCredentials
		}
		return nil
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return errNoCredentials
	}
	want, known := a.Credentials[id]
	got, exp := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(got[:], exp[:]) != 1 || !known {
		return errBadCredentials
	}
	return nil
}
