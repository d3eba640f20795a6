package sdkserver

import (
	"net/http/httptest"
	"testing"
	"unicode/utf8"
)

// FuzzHandshake: any query parses or is refused without panicking, and a
// handshake that passes checkHandshake is within every bound.
func FuzzHandshake(f *testing.F) {
	f.Add("Authorization=tok%2B%2F%3D%26x&ComputeId=compute-1&FleetId=fleet-1&IdempotencyToken=9f449d70&pID=proc-1&sdkLanguage=Go&sdkVersion=5.6.0")
	f.Add("ComputeId=compute-2&FleetId=fleet-2&pID=proc-2&sdkLanguage=CSharp&sdkVersion=5.4.0&IdempotencyToken=a-b&Authorization=tok-1")
	f.Add("Authorization=SigV4&ComputeId=c&FleetId=arn:aws:gamelift:us-west-2:1:fleet/fleet-1&pID=%ff&X-Amz-Date=x")
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = query
		h, err := parseHandshake(r)
		if err != nil {
			return
		}
		if checkHandshake(h) != nil {
			return
		}
		if utf8.RuneCountInString(h.PID) > MaxPIDLength || len(h.FleetID) > 512 || len(h.ComputeID) > 1024 ||
			len(h.AuthToken) > 64 || len(h.SDKVersion) > 128 || len(h.SDKLanguage) > 32 || len(h.IdempotencyToken) > 48 {
			t.Fatalf("out of bounds but accepted: %+v", h)
		}
	})
}
