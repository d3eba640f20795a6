package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// The canonical request of SigV4, built here for the requests every AWS
// SDK and botocore send: no query string; a path of unreserved
// characters and '/'; a host name of letters, digits, '.' and '-' with
// an optional port other than 80; signed header names in lowercase,
// sorted, each once, host and x-amz-date among them and none of the
// headers the SDK's signer leaves out (content-length only with a body,
// x-amz-security-token only when sent); values with no leading or
// trailing white space and no run of spaces. For such a request each
// part of the SDK's canonical form is the request's own text (no
// escaping, no trimming, no sorting left to do), which is what is written
// here, so the signature is the one the SDK's signer computes for it;
// TestCanonicalMatchesSDK and FuzzCanonicalMatchesSDK hold the two
// together. Any other request is signed by the SDK's signer itself
// (sdkSignature), as strictly as before.

// canonicalSignature writes into sig the hex signature r should carry,
// when r is of the shape above; it reports false, writing nothing, for
// any other request.
func (v *Verifier) canonicalSignature(sig *[2 * sha256.Size]byte, r *http.Request, s *Signed, payloadHash string) bool {
	var amzDate [len(amzDateFormat)]byte
	date := s.signTime.AppendFormat(amzDate[:0], amzDateFormat)
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	creq, ok := appendCanonicalRequest(sc.buf[:0], r, s.a, date, payloadHash)
	if !ok {
		return false
	}
	sum := sha256.Sum256(creq)
	sts := append(creq[:0], "AWS4-HMAC-SHA256\n"...)
	sts = append(sts, date...)
	sts = append(sts, '\n')
	sts = append(sts, s.a.date...)
	sts = append(sts, '/')
	sts = append(sts, s.a.region...)
	sts = append(sts, '/')
	sts = append(sts, s.a.service...)
	sts = append(sts, "/aws4_request\n"...)
	sts = hex.AppendEncode(sts, sum[:])
	sc.buf = sts
	mac := v.keys.get(s.secret, s.a.date, s.a.region, s.a.service).mac(sts, sc.sum[:0])
	hex.Encode(sig[:], mac)
	return true
}

// scratch is the memory one signature is computed in, reused.
type scratch struct {
	buf []byte
	sum []byte
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{buf: make([]byte, 0, 1024), sum: make([]byte, 0, sha256.Size)}
}}

// put gives sc back, unless a large request made its buffer large.
func (sc *scratch) put() {
	if cap(sc.buf) <= 16<<10 {
		scratchPool.Put(sc)
	}
}

// appendCanonicalRequest appends the canonical request of r to dst, with
// amzDate as its X-Amz-Date, when r is of the shape above.
func appendCanonicalRequest(dst []byte, r *http.Request, a *authHeader, amzDate []byte, payloadHash string) ([]byte, bool) {
	path := r.URL.EscapedPath()
	if !plainMethod(r.Method) || r.URL.Opaque != "" || r.URL.RawQuery != "" || r.URL.ForceQuery || !plainPath(path) || !plainHost(r.Host) {
		return nil, false
	}
	dst = append(dst, r.Method...)
	dst = append(dst, '\n')
	dst = append(dst, path...)
	dst = append(dst, "\n\n"...) // the empty query
	hasHost, hasDate := false, false
	prev := ""
	for rest, more := a.signedHeaders, true; more; {
		var name string
		name, rest, more = strings.Cut(rest, ";")
		if name <= prev || !plainHeaderName(name) {
			return nil, false // not sorted, repeated, or not in lowercase
		}
		prev = name
		dst = append(dst, name...)
		dst = append(dst, ':')
		switch name {
		case "host":
			hasHost = true
			dst = append(dst, r.Host...)
		case "x-amz-date":
			hasDate = true
			dst = append(dst, amzDate...)
		case "content-length":
			if r.ContentLength <= 0 {
				return nil, false
			}
			dst = strconv.AppendInt(dst, r.ContentLength, 10)
		case "x-amz-security-token":
			// The signer reads the first value only.
			token := r.Header.Get("X-Amz-Security-Token")
			if token == "" || !plainValue(token) {
				return nil, false
			}
			dst = append(dst, token...)
		case "authorization", "user-agent", "x-amzn-trace-id", "expect", "transfer-encoding":
			return nil, false // never signed by the SDK's signer
		default:
			var key [64]byte
			values := r.Header[string(appendHeaderKey(key[:0], name))]
			for i, value := range values {
				if !plainValue(value) {
					return nil, false
				}
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, value...)
			}
		}
		dst = append(dst, '\n')
	}
	if !hasHost || !hasDate {
		return nil, false
	}
	dst = append(dst, '\n')
	dst = append(dst, a.signedHeaders...)
	dst = append(dst, '\n')
	dst = append(dst, payloadHash...)
	return dst, true
}

// appendHeaderKey appends the canonical key of name (lowercase letters,
// digits and '-'), as http.CanonicalHeaderKey writes it: each letter
// upper case at the start and after a '-'.
func appendHeaderKey(dst []byte, name string) []byte {
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
		upper = c == '-'
	}
	return dst
}

func plainMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if m[i] < 'A' || m[i] > 'Z' {
			return false
		}
	}
	return m != ""
}

// plainPath: '/' first, then only unreserved characters and '/'.
func plainPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 1; i < len(p); i++ {
		if c := p[i]; !unreserved(c) && c != '/' {
			return false
		}
	}
	return true
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// plainHost: a name of letters, digits, '.' and '-', with an optional
// port of digits other than 80 (the signer drops a port 80).
func plainHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if name == "" || hasPort && (port == "" || port == "80") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

func plainHeaderName(n string) bool {
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return n != ""
}

// plainValue: no white space at either end and no two spaces in a row,
// so that the signer's trimming leaves it as it is.
func plainValue(v string) bool {
	return strings.TrimSpace(v) == v && !strings.Contains(v, "  ")
}
