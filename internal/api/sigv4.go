package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anylift/anylift/internal/access"
)

// SigningName is the SigV4 service name of GameLift.
const SigningName = "gamelift"

// MaxClockSkew is how far a request's X-Amz-Date may be from our clock.
const MaxClockSkew = 15 * time.Minute

const amzDateFormat = "20060102T150405Z"

// authError is a failed authentication: an AWS common error, not a
// GameLift one, so clients show it as a generic error with this code.
type authError struct {
	code    string
	status  int
	message string
}

func (e *authError) Error() string { return e.code + ": " + e.message }

func missingToken() *authError {
	return &authError{"MissingAuthenticationTokenException", http.StatusForbidden, "Missing Authentication Token"}
}

func incomplete(msg string) *authError {
	return &authError{"IncompleteSignatureException", http.StatusForbidden, msg}
}

func invalidSignature(msg string) *authError {
	return &authError{"InvalidSignatureException", http.StatusForbidden, msg}
}

// Keys finds the access keys requests may be signed with (an
// *access.Keyring, or an *access.Set).
type Keys interface {
	Key(id string) (*access.Key, bool)
}

// Verifier checks SigV4 signatures against known credentials, recomputing
// them: the requests of the AWS SDKs and botocore (no query, a plain
// path and host, plain signed header values) from their canonical form
// built here, with signing keys kept (signingkeys.go); any other request
// with the AWS SDK's own signer, which computes the same signature for
// the requests of the first kind (canonical.go says why).
type Verifier struct {
	// Keys are the access keys accepted; nil accepts none.
	Keys Keys
	// AnyCredentials accepts any well-formed signature from any key. For
	// local development only.
	AnyCredentials bool
	// Region, when set, is the only region a credential scope may name,
	// as GameLift accepts only signatures for its own region.
	Region string
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	keys signingKeys
}

// authHeader is a parsed Authorization header. Its strings are parts of
// the header's.
type authHeader struct {
	accessKey, date, region, service string
	// signedHeaders is the SignedHeaders parameter as sent: names
	// separated by ';'.
	signedHeaders string
	signature     string
}

func parseAuthorization(h string) (*authHeader, *authError) {
	const algo = "AWS4-HMAC-SHA256"
	if !strings.HasPrefix(h, algo+" ") {
		return nil, incomplete("Authorization header must use the AWS4-HMAC-SHA256 algorithm")
	}
	// Name=Value pairs separated by commas; of a name given twice, the
	// last value counts; names other than these three are ignored.
	var credential, signedHeaders, sig string
	for rest, more := h[len(algo)+1:], true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			// The part is not repeated: it may hold the signature.
			return nil, incomplete("Authorization header has a malformed parameter: want Name=Value pairs separated by commas")
		}
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signedHeaders = v
		case "Signature":
			sig = v
		}
	}
	for _, p := range [...]struct{ name, value string }{{"Credential", credential}, {"SignedHeaders", signedHeaders}, {"Signature", sig}} {
		if p.value == "" {
			return nil, incomplete("Authorization header requires '" + p.name + "' parameter.")
		}
	}
	var scope [5]string
	if strings.Count(credential, "/") != len(scope)-1 {
		return nil, incomplete("Credential must have the form <access key>/<date>/<region>/" + SigningName + "/aws4_request")
	}
	rest := credential
	for i := range scope[:len(scope)-1] {
		scope[i], rest, _ = strings.Cut(rest, "/")
	}
	scope[len(scope)-1] = rest
	if scope[0] == "" || scope[4] != "aws4_request" {
		return nil, incomplete("Credential must have the form <access key>/<date>/<region>/" + SigningName + "/aws4_request")
	}
	if scope[3] != SigningName {
		return nil, invalidSignature("Credential should be scoped to correct service: '" + SigningName + "'.")
	}
	if len(sig) != 64 || strings.Trim(sig, "0123456789abcdef") != "" {
		return nil, incomplete("Signature must be 64 lowercase hexadecimal characters")
	}
	hasHost := false
	for rest, more := signedHeaders, true; more; {
		var name string
		name, rest, more = strings.Cut(rest, ";")
		hasHost = hasHost || name == "host"
	}
	if !hasHost {
		return nil, incomplete("SignedHeaders must include host")
	}
	return &authHeader{
		accessKey: scope[0], date: scope[1], region: scope[2], service: scope[3],
		signedHeaders: signedHeaders, signature: sig,
	}, nil
}

// Verify authenticates r, whose body has been read into body. It returns
// the access key id on success, and the key (nil when any credentials
// are accepted: every right).
func (v *Verifier) Verify(r *http.Request, body []byte) (string, *access.Key, *authError) {
	pre, aerr := v.PreVerify(r)
	if aerr != nil {
		return "", nil, aerr
	}
	if aerr := v.Finish(r, pre, body); aerr != nil {
		return "", nil, aerr
	}
	return pre.accessKey, pre.key, nil
}

// Signed is what PreVerify learned from a request's headers.
type Signed struct {
	accessKey string
	// key is the access key signing, with its rights and rate; nil when
	// any credentials are accepted.
	key      *access.Key
	a        *authHeader
	secret   string
	signTime time.Time
	// claimed is the payload hash of X-Amz-Content-Sha256 the signature
	// was verified over, "" when it was not sent.
	claimed string
	// done: nothing is left to check but the body's hash against claimed.
	done bool
}

// Authenticated reports whether the request's signature was verified
// from its headers alone (X-Amz-Content-Sha256 sent, or any credentials
// accepted): its body is then read as an authenticated one.
func (s *Signed) Authenticated() bool { return s.done }

// PreVerify checks all that can be checked before the body is read: the
// Authorization header, the date and its skew, the access key and, when
// the client declared the payload's hash in X-Amz-Content-Sha256, the
// signature itself over that hash. Finish checks the rest.
func (v *Verifier) PreVerify(r *http.Request) (*Signed, *authError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if v.AnyCredentials {
			// Local development: clients that send no signature at all
			// (the O3DE gem's client with its local endpoint uses
			// anonymous credentials) are served too.
			return &Signed{done: true}, nil
		}
		return nil, missingToken()
	}
	a, aerr := parseAuthorization(h)
	if aerr != nil {
		return nil, aerr
	}
	dateHeader := r.Header.Get("X-Amz-Date")
	if dateHeader == "" {
		return nil, incomplete("X-Amz-Date header is required")
	}
	signTime, err := time.Parse(amzDateFormat, dateHeader)
	if err != nil {
		return nil, incomplete("X-Amz-Date must have the form YYYYMMDD'T'HHMMSS'Z'")
	}
	var day [8]byte
	if a.date != string(signTime.AppendFormat(day[:0], "20060102")) {
		return nil, invalidSignature("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + a.date + "' != '" + signTime.Format("20060102") + "', from '" + dateHeader + "'.")
	}
	if v.AnyCredentials {
		return &Signed{accessKey: a.accessKey, done: true}, nil
	}
	if v.Region != "" && a.region != v.Region {
		return nil, invalidSignature("Credential should be scoped to a valid region, not '" + a.region + "'. ")
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now().UTC()
	if signTime.Before(t.Add(-MaxClockSkew)) {
		return nil, invalidSignature("Signature expired: " + dateHeader + " is now earlier than " + t.Add(-MaxClockSkew).Format(amzDateFormat) + " (" + t.Format(amzDateFormat) + " - 15 min.)")
	}
	if signTime.After(t.Add(MaxClockSkew)) {
		return nil, invalidSignature("Signature not yet current: " + dateHeader + " is still later than " + t.Add(MaxClockSkew).Format(amzDateFormat) + " (" + t.Format(amzDateFormat) + " + 15 min.)")
	}
	var key *access.Key
	ok := false
	if v.Keys != nil {
		key, ok = v.Keys.Key(a.accessKey)
	}
	if !ok {
		return nil, &authError{"UnrecognizedClientException", http.StatusForbidden, "The security token included in the request is invalid."}
	}
	s := &Signed{accessKey: a.accessKey, key: key, a: a, secret: key.Secret, signTime: signTime}
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); isHexHash(claimed) {
		if aerr := v.check(r, s, claimed); aerr != nil {
			return nil, aerr
		}
		s.claimed, s.done = claimed, true
	}
	return s, nil
}

// Finish verifies what PreVerify could not: the signature over body's
// hash, or body's hash against the one declared and already verified.
func (v *Verifier) Finish(r *http.Request, s *Signed, body []byte) *authError {
	if s.a == nil { // any credentials
		return nil
	}
	sum := sha256.Sum256(body)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	if s.done {
		if string(hexSum[:]) != s.claimed {
			return invalidSignature("X-Amz-Content-Sha256 does not match the body")
		}
		return nil
	}
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); claimed != "" && claimed != string(hexSum[:]) {
		return invalidSignature("X-Amz-Content-Sha256 does not match the body")
	}
	return v.check(r, s, string(hexSum[:]))
}

// check compares the request's signature with the one computed over
// payloadHash.
func (v *Verifier) check(r *http.Request, s *Signed, payloadHash string) *authError {
	var want [2 * sha256.Size]byte
	ok := v.canonicalSignature(&want, r, s, payloadHash)
	if !ok {
		sig, err := sdkSignature(r, s.a, s.secret, s.signTime, payloadHash)
		ok = err == nil && len(sig) == len(want)
		copy(want[:], sig)
	}
	if !ok || subtle.ConstantTimeCompare(want[:], []byte(s.a.signature)) != 1 {
		return invalidSignature("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return nil
}

// isHexHash reports whether s is a lowercase hex SHA-256.
func isHexHash(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// sdkSignature signs a copy of r holding only the headers the client
// signed, and returns the signature the SDK's signer computes for it. Each
// call has a signer of its own: a signer keeps the last signing key it
// derived for a region and service, and would use it for the same access
// key id with another secret (a key rotated) until the day ends.
func sdkSignature(r *http.Request, a *authHeader, secret string, t time.Time, payloadHash string) (string, error) {
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return "", err
	}
	req.Host = r.Host
	creds := aws.Credentials{AccessKeyID: a.accessKey, SecretAccessKey: secret}
	signed := strings.Split(a.signedHeaders, ";")
	for _, name := range signed {
		switch name {
		case "host", "x-amz-date":
		case "content-length":
			req.ContentLength = r.ContentLength
		case "x-amz-security-token":
			creds.SessionToken = r.Header.Get(name)
		default:
			req.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, payloadHash, a.service, a.region, t); err != nil {
		return "", err
	}
	got, perr := parseAuthorization(req.Header.Get("Authorization"))
	if perr != nil {
		return "", perr
	}
	if got.signedHeaders != a.signedHeaders {
		return "", invalidSignature("signed headers differ")
	}
	return got.signature, nil
}
