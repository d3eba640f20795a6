package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
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

// Verifier checks SigV4 signatures against known credentials, recomputing
// them with the AWS SDK's own signer.
type Verifier struct {
	// Secrets maps access key ids to secret keys.
	Secrets map[string]string
	// AnyCredentials accepts any well-formed signature from any key. For
	// local development only.
	AnyCredentials bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

var signer = v4.NewSigner()

// authHeader is a parsed Authorization header.
type authHeader struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
}

func parseAuthorization(h string) (*authHeader, *authError) {
	const algo = "AWS4-HMAC-SHA256"
	if !strings.HasPrefix(h, algo+" ") {
		return nil, incomplete("Authorization header must use the AWS4-HMAC-SHA256 algorithm")
	}
	params := map[string]string{}
	for _, part := range strings.Split(h[len(algo)+1:], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			// The part is not repeated: it may hold the signature.
			return nil, incomplete("Authorization header has a malformed parameter: want Name=Value pairs separated by commas")
		}
		params[k] = v
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if params[k] == "" {
			return nil, incomplete("Authorization header requires '" + k + "' parameter.")
		}
	}
	scope := strings.Split(params["Credential"], "/")
	if len(scope) != 5 || scope[0] == "" || scope[4] != "aws4_request" {
		return nil, incomplete("Credential must have the form <access key>/<date>/<region>/" + SigningName + "/aws4_request")
	}
	if scope[3] != SigningName {
		return nil, invalidSignature("Credential should be scoped to correct service: '" + SigningName + "'.")
	}
	sig := params["Signature"]
	if len(sig) != 64 || strings.Trim(sig, "0123456789abcdef") != "" {
		return nil, incomplete("Signature must be 64 lowercase hexadecimal characters")
	}
	signed := strings.Split(params["SignedHeaders"], ";")
	hasHost := false
	for _, s := range signed {
		if s == "host" {
			hasHost = true
		}
	}
	if !hasHost {
		return nil, incomplete("SignedHeaders must include host")
	}
	return &authHeader{
		accessKey: scope[0], date: scope[1], region: scope[2], service: scope[3],
		signedHeaders: signed, signature: sig,
	}, nil
}

// Verify authenticates r, whose body has been read into body. It returns
// the access key id on success.
func (v *Verifier) Verify(r *http.Request, body []byte) (string, *authError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", missingToken()
	}
	a, aerr := parseAuthorization(h)
	if aerr != nil {
		return "", aerr
	}
	dateHeader := r.Header.Get("X-Amz-Date")
	if dateHeader == "" {
		return "", incomplete("X-Amz-Date header is required")
	}
	signTime, err := time.Parse(amzDateFormat, dateHeader)
	if err != nil {
		return "", incomplete("X-Amz-Date must have the form YYYYMMDD'T'HHMMSS'Z'")
	}
	if a.date != signTime.Format("20060102") {
		return "", invalidSignature("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + a.date + "' != '" + signTime.Format("20060102") + "', from '" + dateHeader + "'.")
	}
	if v.AnyCredentials {
		return a.accessKey, nil
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now().UTC()
	if signTime.Before(t.Add(-MaxClockSkew)) {
		return "", invalidSignature("Signature expired: " + dateHeader + " is now earlier than " + t.Add(-MaxClockSkew).Format(amzDateFormat) + " (" + t.Format(amzDateFormat) + " - 15 min.)")
	}
	if signTime.After(t.Add(MaxClockSkew)) {
		return "", invalidSignature("Signature not yet current: " + dateHeader + " is still later than " + t.Add(MaxClockSkew).Format(amzDateFormat) + " (" + t.Format(amzDateFormat) + " + 15 min.)")
	}
	secret, ok := v.Secrets[a.accessKey]
	if !ok {
		return "", &authError{"UnrecognizedClientException", http.StatusForbidden, "The security token included in the request is invalid."}
	}
	want, err := v.expected(r, body, a, secret, signTime)
	if err != nil || !hmac.Equal([]byte(want), []byte(a.signature)) {
		return "", invalidSignature("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return a.accessKey, nil
}

// expected signs a copy of r holding only the headers the client signed,
// and returns the signature the SDK's signer computes for it.
func (v *Verifier) expected(r *http.Request, body []byte, a *authHeader, secret string, t time.Time) (string, error) {
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return "", err
	}
	req.Host = r.Host
	creds := aws.Credentials{AccessKeyID: a.accessKey, SecretAccessKey: secret}
	for _, name := range a.signedHeaders {
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
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); claimed != "" && claimed != payloadHash {
		return "", invalidSignature("X-Amz-Content-Sha256 does not match the body")
	}
	if err := signer.SignHTTP(context.Background(), creds, req, payloadHash, a.service, a.region, t); err != nil {
		return "", err
	}
	got, perr := parseAuthorization(req.Header.Get("Authorization"))
	if perr != nil {
		return "", perr
	}
	if strings.Join(got.signedHeaders, ";") != strings.Join(a.signedHeaders, ";") {
		return "", invalidSignature("signed headers differ")
	}
	return got.signature, nil
}
