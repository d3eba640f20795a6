package lifecycle_test

import (
	"net/url"

	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
)

func TestHandshakeRefusedWith403(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		h.compute("host-2", "10.0.0.6")
		other, err := h.gl.CreateFleet(t.Context(), &gamelift.CreateFleetInput{Name: aws.String("other"), ComputeType: "ANYWHERE",
			Locations: []types.LocationConfiguration{{Location: aws.String(testLocation)}}})
		if err != nil {
			t.Fatal(err)
		}
		otherFleet := aws.ToString(other.FleetAttributes.FleetId)
		query := func(fleet, compute, token string) string {
			return url.Values{"pID": {"proc-1"}, "ComputeId": {compute}, "FleetId": {fleet}, "Authorization": {token},
				"sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "IdempotencyToken": {"i"}}.Encode()
		}
		for name, q := range map[string]string{
			"missing token": strings.Replace(query(h.fleet, "host-1", tok), "Authorization="+tok+"&", "", 1),
			"wrong token":   query(h.fleet, "host-1", "x"+tok),
			"other compute": query(h.fleet, "host-2", tok),
			"other fleet":   query(otherFleet, "host-1", tok),
			"no pID":        strings.Replace(query(h.fleet, "host-1", tok), "&pID=proc-1", "", 1),
		} {
			if _, st, err := h.dialQuery("/", q); err == nil || st != 403 {
				t.Errorf("%s: HTTP %d, %v; want 403", name, st, err)
			}
		}
		// Expired: auth tokens live 15 minutes.
		h.clock.Add(15*time.Minute + time.Second)
		if _, st, err := h.dialQuery("/", query(h.fleet, "host-1", tok)); err == nil || st != 403 {
			t.Errorf("expired token: HTTP %d, %v; want 403", st, err)
		}
	})
}

func TestHandshakeQueryAnyOrderEncodedOrNot(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		tok := h.compute("host-1", "10.0.0.5")
		raw := func(pid string) []string {
			return []string{"ComputeId=host-1", "FleetId=" + h.fleet, "pID=" + pid, "sdkLanguage=CSharp", "sdkVersion=5.4.0",
				"IdempotencyToken=abc", "Authorization=" + tok}
		}
		cases := map[string]struct{ path, query string }{
			"csharp order, raw":       {"/", strings.Join(raw("p-cs"), "&")},
			"reversed, trailing path": {"/some/path/", strings.Join(reverse(raw("p-rev")), "&")},
			"go style, encoded":       {"", h.procQuery("host-1", "p-go", tok)},
			"fully percent-encoded":   {"/", strings.ReplaceAll(strings.Join(raw("p-enc"), "&"), "-", "%2D")},
		}
		for name, tc := range cases {
			c, st, err := h.dialQuery(tc.path, tc.query)
			if err != nil {
				t.Errorf("%s: HTTP %d, %v", name, st, err)
				continue
			}
			c.CloseNow()
		}
	})
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
