package events

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/anylift/anylift/internal/access"
)

// Auth decides who may read the event stream: the admin API's own
// credentials, presented either as a SigV4-signed GET (as the AWS SDKs
// sign any request) or as HTTP Basic with the access key id as user name
// and the secret key as password (for curl and EventSource polyfills). A
// key limited by a policy needs gamelift:DescribeFleetEvents on "*": the
// stream carries the events of every fleet, queue and configuration.
type Auth struct {
	// Keys finds an access key by id; nil refuses HTTP Basic.
	Keys func(id string) (*access.Key, bool)
	// SigV4 verifies a SigV4-signed request (the API's verifier) and
	// returns its key; nil refuses SigV4.
	SigV4 func(*http.Request) (*access.Key, error)
	// Open lets every request in, with or without credentials. Local
	// development only (--insecure-any-credentials).
	Open bool
}

// StreamAction is what a key's policy must allow, on "*", to read the
// stream.
const StreamAction = access.Service + ":DescribeFleetEvents"

var (
	errNoCredentials  = errors.New("credentials required: HTTP Basic (access key id, secret key) or a SigV4-signed request")
	errBadCredentials = errors.New("the credentials are not valid")
	errNotAllowed     = errors.New("the access key is not authorized to perform " + StreamAction + " on resource *, which reading the event stream needs")
)

// check authenticates r and checks the key's rights. Secrets are
// compared in constant time (over their SHA-256, so lengths do not leak
// either).
func (a *Auth) check(r *http.Request) (status int, err error) {
	if a.Open {
		return http.StatusOK, nil
	}
	key, err := a.authenticate(r)
	if err != nil {
		return http.StatusUnauthorized, err
	}
	if ok, _, _ := key.Allowed(StreamAction, nil); !ok {
		return http.StatusForbidden, errNotAllowed
	}
	return http.StatusOK, nil
}

func (a *Auth) authenticate(r *http.Request) (*access.Key, error) {
	h := r.Header.Get("Authorization")
	if strings.HasPrefix(h, "AWS4-HMAC-SHA256 ") {
		if a.SigV4 == nil {
			return nil, errBadCredentials
		}
		key, err := a.SigV4(r)
		if err != nil {
			return nil, errBadCredentials
		}
		return key, nil
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return nil, errNoCredentials
	}
	var key *access.Key
	known := false
	if a.Keys != nil {
		key, known = a.Keys(id)
	}
	want := "\x00unknown"
	if known {
		want = key.Secret
	}
	got, exp := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(got[:], exp[:]) != 1 || !known {
		return nil, errBadCredentials
	}
	return key, nil
}
