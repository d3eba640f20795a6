package console

import (
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/access"
)

func keys(pairs map[string]string) Keys { return access.Static(pairs) }

func TestSessionCookie(t *testing.T) {
	s := newSigner(keys(map[string]string{"AKID": "secret", "OTHER": "other"}), false)
	now := time.Unix(1_800_000_000, 0)
	v := s.issue("AKID", now.Add(time.Hour))
	sess, ok := s.verify(v, now)
	if !ok || sess.KeyID != "AKID" {
		t.Fatalf("verify(issued) = %+v, %v", sess, ok)
	}
	if _, ok := s.verify(v, now.Add(time.Hour)); ok {
		t.Error("an expired cookie verified")
	}
	if _, ok := newSigner(keys(map[string]string{"AKID": "rotated"}), false).verify(v, now); ok {
		t.Error("a cookie verified after the secret changed")
	}
	if _, ok := newSigner(keys(map[string]string{"OTHER": "other"}), false).verify(v, now); ok {
		t.Error("a cookie verified after its key was revoked")
	}
	if sess2, ok := newSigner(keys(map[string]string{"AKID": "secret"}), false).verify(v, now); !ok || sess2.Key == nil || sess2.Key.ID != "AKID" {
		t.Error("a cookie did not verify on another node with the same key (or without its key)")
	}
	if s.issue("UNKNOWN", now.Add(time.Hour)) != "" {
		t.Error("a cookie issued for an unknown key")
	}
	dev := newSigner(keys(nil), true)
	if d, ok := dev.verify(dev.issue("dev", now.Add(time.Hour)), now); !ok || d.Key != nil {
		t.Errorf("development session: %+v %v", d, ok)
	}
	enc, sig, _ := strings.Cut(v, ".")
	if _, ok := s.verify(enc[:len(enc)-2]+"AA."+sig, now); ok {
		t.Error("a cookie with a changed payload verified")
	}
	other, _ := s.verify(s.issue("AKID", now.Add(time.Hour)), now)
	if s.checkCSRF(other, s.csrf(sess)) || !s.checkCSRF(sess, s.csrf(sess)) || s.checkCSRF(nil, "") {
		t.Error("CSRF tokens are not bound to their session")
	}
}

func TestCredentials(t *testing.T) {
	creds := keys(map[string]string{"AKID": "secret"})
	for _, c := range []struct {
		id, secret string
		ok         bool
	}{{"AKID", "secret", true}, {"AKID", "Secret", false}, {"AKID", "", false}, {"OTHER", "secret", false}, {"", "", false}} {
		if got := credentialsOK(creds, c.id, c.secret); got != c.ok {
			t.Errorf("credentialsOK(%q, %q) = %v", c.id, c.secret, got)
		}
	}
	if credentialsOK(keys(map[string]string{"AKID": ""}), "AKID", "") {
		t.Error("an empty secret signed in")
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/console/fleets/f-1": "/console/fleets/f-1", "//evil.example/console/": "/console/fleets",
		"https://evil.example": "/console/fleets", "/consolex": "/console/fleets", "/console/\\evil": "/console/fleets",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzVerifyCookie: no cookie value crashes the verifier, and what
// verifies is a session the signer issued (for the only key id it signed).
func FuzzVerifyCookie(f *testing.F) {
	s := newSigner(keys(map[string]string{"AKID": "secret"}), false)
	now := time.Unix(1_800_000_000, 0)
	good := s.issue("AKID", now.Add(time.Hour))
	for _, seed := range []string{good, "", ".", "a.b", "QUtJRHwxfDI.x", good + "x", strings.Repeat("|", 50)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		sess, ok := s.verify(v, now)
		if ok && (sess.KeyID != "AKID" || len(sess.Nonce) != 32) {
			t.Fatalf("forged cookie %q verified as %+v", v, sess)
		}
	})
}
