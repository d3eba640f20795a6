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
