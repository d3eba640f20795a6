package cli

import "testing"

// Without credentials, only an endpoint on this machine gets dev's pair.
func TestDevPairOnlyForLocalEndpoints(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"http://127.0.0.1:9870": true, "http://localhost:1234": true, "http://[::1]:9870": true, "http://127.0.0.2": true,
		"http://192.0.2.1:9870": false, "https://anylift.example": false, "http://localhost.example": false, "::bad": false,
	} {
		env := map[string]string{"ANYLIFT_ENDPOINT": endpoint}
		tg, _, err := resolve(&globals{}, func(k string) string { return env[k] })
		if got := err == nil && tg.devPair && tg.creds.AccessKeyID == DevAccessKey; got != want {
			t.Errorf("%s: dev pair %v (%v), want %v", endpoint, got, err, want)
		}
	}
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s"}
	if tg, _, err := resolve(&globals{}, func(k string) string { return env[k] }); err != nil || tg.devPair || tg.creds.AccessKeyID != "AKID" {
		t.Errorf("given credentials: %+v %v", tg, err)
	}
}
