package api

import "testing"

// FuzzDecodeAgentReport: any body either decodes or is refused with an
// error; nothing panics.
func FuzzDecodeAgentReport(f *testing.F) {
	f.Add([]byte(`{"FleetId":"fleet-1","ComputeName":"c","ProcessId":"p","Kind":"EXITED","ExitCode":3}`))
	f.Add([]byte(`{"FleetId":"fleet-1","ComputeName":"c","Kind":"INVALID_PATH","LaunchPath":"/x"}`))
	f.Add([]byte(`{"Kind":1}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`{"Unknown":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeAgentReport(body)
		if (r == nil) == (err == nil) {
			t.Fatalf("DecodeAgentReport(%q) = %v, %v", body, r, err)
		}
	})
}
