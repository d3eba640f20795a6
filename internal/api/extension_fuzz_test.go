package api

import (
	"testing"

	"github.com/anylift/anylift/internal/extapi"
)

// FuzzDecodeExtension: any body of InjectFault either decodes or is
// refused with an error; nothing panics.
func FuzzDecodeExtension(f *testing.F) {
	f.Add([]byte(`{"Fault":{"Kind":"PLACEMENT_FAILURE","FleetId":"fleet-1","Count":2}}`))
	f.Add([]byte(`{"Fault":{"Kind":"PLACEMENT_DELAY","FleetId":"fleet-1","Delay":"20s","Duration":"1m"}}`))
	f.Add([]byte(`{"Fault":{"Kind":"DROP_CONNECTION","FleetId":"f","ProcessId":"p","Count":-1}}`))
	f.Add([]byte(`{"Fault":{"Count":"x"}}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"Unknown":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeExtension[extapi.InjectFaultInput](body)
		if (in == nil) == (err == nil) {
			t.Fatalf("DecodeExtension(%q) = %v, %v", body, in, err)
		}
	})
}
