package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/access"
)

// Sign-in. The console accepts the API's credentials: an access key id
// and its secret key, compared with the server's keys. A signed-in
// browser holds a session cookie, "<key id>|<expiry>|<nonce>" and its
// HMAC-SHA256, HttpOnly, SameSite=Strict, limited to /console. The HMAC
// key is derived from the key's id and secret, so every node sharing the
// key accepts the cookie, and rotating or revoking the key (the
// credentials file is re-read when it changes) signs its sessions out at
// once. Each form that changes state carries a CSRF token, the HMAC of
// the cookie's nonce, and the request must come from the console's own
// origin (http.CrossOriginProtection). A signed-in key has the rights its
// policy gives it, page by page (rights.go).

const (
	cookieName  = "anylift_console"
	sessionLife = 12 * time.Hour
)

// Keys finds access keys by id (an *access.Keyring).
type Keys interface {
	Key(id string) (*access.Key, bool)
}

// session is a verified session cookie.
type session struct {
	KeyID string
	Nonce string
	// Key is the signed-in key with its rights; nil when any credentials
	// are accepted (development): every right.
	Key *access.Key
	mac []byte // the key the cookie was signed with
}

// signer signs and checks cookies and CSRF tokens.
type signer struct {
	keys Keys
	// open: any key id is accepted (development); keys not in keys
	// sign with random, so cookies last as long as the process.
	open   bool
	random []byte
}

func newSigner(keys Keys, open bool) *signer {
	s := &signer{keys: keys, open: open, random: make([]byte, 32)}
	rand.Read(s.random)
	return s
}

// macKey is the HMAC key of keyID's sessions, and the key: derived from
// the key's secret, or random for an unknown key when open. ok is false
// for an unknown key otherwise.
func (s *signer) macKey(keyID string) (mac []byte, key *access.Key, ok bool) {
	if s.keys != nil {
		if k, found := s.keys.Key(keyID); found {
			m := hmac.New(sha256.New, []byte("anylift console session key v2"))
			m.Write([]byte(k.ID + "\x00" + k.Secret))
			return m.Sum(nil), k, true
		}
	}
	if s.open {
		return s.random, nil, true
	}
	return nil, nil, false
}

func sum(key []byte, parts ...string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns a cookie value for keyID valid until exp ("" for a key
// it does not know).
func (s *signer) issue(keyID string, exp time.Time) string {
	mac, _, ok := s.macKey(keyID)
	if !ok {
		return ""
	}
	nb := make([]byte, 16)
	rand.Read(nb)
	payload := keyID + "|" + strconv.FormatInt(exp.Unix(), 10) + "|" + hex.EncodeToString(nb)
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + sum(mac, "session", payload)
}

// verify checks a cookie value at now, against the key as it is now.
func (s *signer) verify(v string, now time.Time) (*session, bool) {
	enc, sig, ok := strings.Cut(v, ".")
	if !ok {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return nil, false
	}
	payload := string(raw)
	parts := strings.Split(payload, "|")
	if len(parts) != 3 {
		return nil, false
	}
	mac, key, ok := s.macKey(parts[0])
	if !ok || !hmac.Equal([]byte(sig), []byte(sum(mac, "session", payload))) {
		return nil, false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || now.Unix() >= exp {
		return nil, false
	}
	return &session{KeyID: parts[0], Nonce: parts[2], Key: key, mac: mac}, true
}

// csrf is the token forms of this session carry.
func (s *signer) csrf(sess *session) string { return sum(sess.mac, "csrf", sess.Nonce) }

func (s *signer) checkCSRF(sess *session, token string) bool {
	return sess != nil && hmac.Equal([]byte(token), []byte(s.csrf(sess)))
}

// credentialsOK compares a key pair with the server's keys in constant
// time (per pair).
func credentialsOK(keys Keys, keyID, secret string) bool {
	want, ok := "\x00never", false
	if keys != nil {
		var k *access.Key
		if k, ok = keys.Key(keyID); ok {
			want = k.Secret
		}
	}
	eq := subtle.ConstantTimeCompare([]byte(want), []byte(secret)) == 1
	return ok && eq && secret != ""
}

// setSession sets the session cookie for keyID.
func (c *Console) setSession(w http.ResponseWriter, r *http.Request, keyID string) *session {
	exp := c.now().Add(sessionLife)
	v := c.signer.issue(keyID, exp)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: v, Path: "/console", Expires: exp,
		MaxAge: int(sessionLife.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	sess, _ := c.signer.verify(v, c.now())
	return sess
}

// sessionOf returns the request's verified session, if any.
func (c *Console) sessionOf(r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	sess, ok := c.signer.verify(ck.Value, c.now())
	if !ok {
		return nil
	}
	return sess
}
