// Package cluster is the channel between the nodes that share one store:
// a node that must push a message to a server process held by another node
// forwards it to that node's internal listener. Requests are signed with a
// secret the nodes share (HMAC-SHA256 over the method, path, a timestamp,
// a nonce and the body); a request outside the time window, with a nonce
// already seen, or with a wrong signature is refused.
package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Headers of a signed request.
const (
	HeaderTime      = "X-Anylift-Node-Time" // epoch milliseconds of signing
	HeaderNonce     = "X-Anylift-Node-Nonce"
	HeaderSignature = "X-Anylift-Node-Signature"
)

// DefaultWindow is how far a request's timestamp may be from the
// receiver's clock. It is generous: node clocks may differ by seconds.
const DefaultWindow = 2 * time.Minute

// maxNonces bounds the replay guard: past it, requests are refused until
// old nonces age out of the window (a flood, not a peer).
const maxNonces = 1 << 20

// signedPath is what a signature covers of a request's URL: its path, and
// its raw query when it has one (the relayed process connections carry
// theirs there; the other paths have none, so their signed text is
// unchanged).
func signedPath(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}

// signature is the hex HMAC-SHA256 of a request under secret.
func signature(secret []byte, method, path string, ts int64, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("anylift-node-v1\n" + method + "\n" + path + "\n" + strconv.FormatInt(ts, 10) + "\n" + nonce + "\n"))
	m.Write([]byte(hex.EncodeToString(sum[:])))
	return hex.EncodeToString(m.Sum(nil))
}

// sign sets the signature headers of r, whose body is body.
func sign(r *http.Request, secret []byte, now time.Time, body []byte) {
	var b [16]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	ts := now.UnixMilli()
	r.Header.Set(HeaderTime, strconv.FormatInt(ts, 10))
	r.Header.Set(HeaderNonce, nonce)
	r.Header.Set(HeaderSignature, signature(secret, r.Method, signedPath(r.URL), ts, nonce, body))
}

// Verifier checks signed requests and remembers their nonces for the
// time window, so a captured request cannot be replayed.
type Verifier struct {
	secret []byte
	window time.Duration
	now    func() time.Time

	mu     sync.Mutex
	seen   map[string]time.Time // nonce → when it leaves the window
	pruned time.Time            // when seen was last swept
}

// NewVerifier returns a Verifier for secret; window is DefaultWindow when
// zero, now is time.Now when nil.
func NewVerifier(secret []byte, window time.Duration, now func() time.Time) *Verifier {
	if window == 0 {
		window = DefaultWindow
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{secret: secret, window: window, now: now, seen: map[string]time.Time{}}
}

// Errors of Verify; none says more than which check failed.
var (
	ErrUnsigned  = errors.New("request is not signed")
	ErrStale     = errors.New("request timestamp is outside the window")
	ErrSignature = errors.New("signature does not match")
	ErrReplayed  = errors.New("nonce already seen")
)

// Verify checks r, whose body is body. The nonce is remembered only once
// the signature has matched.
func (v *Verifier) Verify(r *http.Request, body []byte) error {
	ts, err := v.CheckHeaders(r)
	if err != nil {
		return err
	}
	nonce, sig := r.Header.Get(HeaderNonce), r.Header.Get(HeaderSignature)
	now := v.now()
	at := time.UnixMilli(ts)
	want := signature(v.secret, r.Method, signedPath(r.URL), ts, nonce, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return ErrSignature
	}
	return v.remember(nonce, at.Add(v.window), now)
}

// CheckHeaders checks what can be checked before the body is read: the
// signature headers are there and the time is within the window. It
// returns the signing time in Unix milliseconds.
func (v *Verifier) CheckHeaders(r *http.Request) (int64, error) {
	tsText, nonce, sig := r.Header.Get(HeaderTime), r.Header.Get(HeaderNonce), r.Header.Get(HeaderSignature)
	if tsText == "" || nonce == "" || sig == "" || len(nonce) > 128 {
		return 0, ErrUnsigned
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return 0, ErrUnsigned
	}
	now := v.now()
	at := time.UnixMilli(ts)
	if at.Before(now.Add(-v.window)) || at.After(now.Add(v.window)) {
		return 0, ErrStale
	}
	return ts, nil
}

func (v *Verifier) remember(nonce string, until, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.seen[nonce]; ok {
		return ErrReplayed
	}
	// Sweep out what left the window, at most once a second, or when full:
	// relayed API calls make a steady stream of nonces, and a sweep per
	// request would scan them all each time.
	if len(v.seen) >= maxNonces || len(v.seen) >= maxNonces/2 && now.Sub(v.pruned) >= time.Second {
		v.pruned = now
		for n, exp := range v.seen {
			if exp.Before(now) {
				delete(v.seen, n)
			}
		}
	}
	if len(v.seen) >= maxNonces {
		return ErrReplayed
	}
	v.seen[nonce] = until
	return nil
}
