package api

import (
	"strings"
	"testing"
)

// FuzzParseAuthorization checks that the Authorization parser never
// panics, that what it accepts is complete, and that no message it writes
// repeats the signature.
func FuzzParseAuthorization(f *testing.F) {
	sig := strings.Repeat("0a", 32)
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=test/20261122/us-west-2/gamelift/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AKID/20261122/us-west-2/gamelift/aws4_request, SignedHeaders=accept;amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;smithy-protocol;x-amz-date, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AKID/20261122/us-west-2/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=a/b/c/gamelift/aws4_request,SignedHeaders=host,Signature=" + sig,
		"Bearer abc",
		"AWS4-HMAC-SHA256 ",
		"AWS4-HMAC-SHA256 Credential=, =, Signature=" + sig + " x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		a, err := parseAuthorization(h)
		if err != nil {
			if a != nil {
				t.Fatal("both a header and an error")
			}
			if err.code != "IncompleteSignatureException" && err.code != "InvalidSignatureException" {
				t.Fatalf("code %s", err.code)
			}
			// Nothing of the header but fixed words may come back.
			for _, part := range strings.FieldsFunc(h, func(r rune) bool { return r == ',' || r == '=' || r == ' ' }) {
				if len(part) >= 12 && strings.Contains(err.message, part) && !strings.Contains(fixedWords, part) {
					t.Fatalf("message %q repeats %q of %q", err.message, part, h)
				}
			}
			return
		}
		if a.accessKey == "" || a.service != SigningName || len(a.signature) != 64 || len(a.signedHeaders) == 0 {
			t.Fatalf("accepted an incomplete header %q: %+v", h, a)
		}
	})
}

// fixedWords are the words the parser's messages may contain.
const fixedWords = "AWS4-HMAC-SHA256 Authorization SignedHeaders Credential <access key>/<date>/<region>/gamelift/aws4_request hexadecimal"

// FuzzParseAuthorizationAsSplit: the parser answers every header as the
// plainer version it replaced (splitting into maps and slices, kept here
// as parseAuthorizationSplit) did: the same fields or the same error.
func FuzzParseAuthorizationAsSplit(f *testing.F) {
	sig := strings.Repeat("0a", 32)
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=test/20261122/us-west-2/gamelift/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=a/b/c/gamelift/aws4_request,SignedHeaders=host,Signature=" + sig + ",Signature=" + strings.Repeat("b", 64),
		"AWS4-HMAC-SHA256 Credential=a/b/c/gamelift/aws4_request/x, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=a/b/c/gamelift/aws4_request, SignedHeaders=;hostx;, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=a/b/c/gamelift/aws4_request, SignedHeaders=host, Signature=" + sig + ", Other=1, Credential=",
		"AWS4-HMAC-SHA256 ,",
		"AWS4-HMAC-SHA256 ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got, gerr := parseAuthorization(h)
		want, werr := parseAuthorizationSplit(h)
		if (gerr == nil) != (werr == nil) || gerr != nil && *gerr != *werr {
			t.Fatalf("%q: error %v, was %v", h, gerr, werr)
		}
		if gerr == nil && *got != *want {
			t.Fatalf("%q: %+v, was %+v", h, got, want)
		}
	})
}

func parseAuthorizationSplit(h string) (*authHeader, *authError) {
	const algo = "AWS4-HMAC-SHA256"
	if !strings.HasPrefix(h, algo+" ") {
		return nil, incomplete("Authorization header must use the AWS4-HMAC-SHA256 algorithm")
	}
	params := map[string]string{}
	for _, part := range strings.Split(h[len(algo)+1:], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
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
		signedHeaders: params["SignedHeaders"], signature: sig,
	}, nil
}
