package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sign-in. The console accepts the API's credentials: an access key id
// and its secret key, compared with the server's configured pairs. A
// signed-in browser holds a session cookie, "<key id>|<expiry>|<nonce>"
// and its HMAC-SHA256, HttpOnly, SameSite=Strict, limited to /console.
// The HMAC key is derived from the configured secrets, so every node
// sharing them accepts the cookie and rotating them signs everyone out.
// Each form that changes state carries a CSRF token, the HMAC of the
// cookie's nonce, and the request must come from the console's own
// origin (http.CrossOriginProtection).

const (
	cookieName  = "anylift_console"
	sessionLife = 12 * time.Hour
)

// session is a verified session cookie.
type session struct {
	KeyID string
	Nonce string
}

// signer signs and checks cookies and CSRF tokens.
type signer struct {
	key []byte
}

// newSigner derives the key from the credentials; with none (any
// credentials accepted), the key is random, so cookies last as long as
// the process.
func newSigner(creds map[string]string) *signer {
	mac := hmac.New(sha256.New, []byte("anylift console session key v1"))
	if len(creds) == 0 {
		b := make([]byte, 32)
		rand.Read(b)
		mac.Write(b)
	}
	ids := make([]string, 0, len(creds))
	for id := range creds {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		mac.Write([]byte(id + "\x00" + creds[id] + "\x00"))
	}
	return &signer{key: mac.Sum(nil)}
}

func (s *signer) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns a cookie value for keyID valid until exp.
func (s *signer) issue(keyID string, exp time.Time) string {
	nb := make([]byte, 16)
	rand.Read(nb)
	payload := keyID + "|" + strconv.FormatInt(exp.Unix(), 10) + "|" + hex.EncodeToString(nb)
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + s.mac("session", payload)
}

// verify checks a cookie value at now.
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
	if !hmac.Equal([]byte(sig), []byte(s.mac("session", payload))) {
		return nil, false
	}
	parts := strings.Split(payload, "|")
	if len(parts) != 3 {
		return nil, false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || now.Unix() >= exp {
		return nil, false
	}
	return &session{KeyID: parts[0], Nonce: parts[2]}, true
}

// csrf is the token forms of this session carry.
func (s *signer) csrf(sess *session) string { return s.mac("csrf", sess.Nonce) }

func (s *signer) checkCSRF(sess *session, token string) bool {
	return sess != nil && hmac.Equal([]byte(token), []byte(s.csrf(sess)))
}

// credentialsOK compares a key pair with the configured ones in constant
// time (per pair).
func credentialsOK(creds map[string]string, keyID, secret string) bool {
	want, ok := creds[keyID]
	if !ok {
		want = "\x00never"
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
