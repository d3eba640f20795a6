package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/anylift/anylift/internal/apitest"
)

// do sends a signed AWS JSON 1.1 request like client.call and decodes the
// answer into out (when not nil).
func (c *client) do(op string, body []byte, out any) error {
	req, err := http.NewRequest(http.MethodPost, c.url+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Target", "GameLift."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	sum := sha256.Sum256(body)
	cl := req.ContentLength
	req.ContentLength = 0
	err = c.signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: apitest.AccessKey, SecretAccessKey: apitest.SecretKey},
		req, hex.EncodeToString(sum[:]), "gamelift", apitest.Region, time.Now())
	req.ContentLength = cl
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", op, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// compute is a registered compute of the benchmark fleet and its auth token.
type compute struct {
	Name  string
	Token string
}

// benchFleet is an Anywhere fleet in one custom location with computes
// that processes connect as. It is what the process benchmarks (and their
// child client processes) need to know.
type benchFleet struct {
	URL      string // the API listener, which also serves the process endpoint
	FleetID  string
	Location string
	Computes []compute
	// Nodes are the API listeners of every node sharing the store, when
	// there are several: processes connect to them in turn.
	Nodes []string
}

// wsURL is the process endpoint on the API listener (on each node in turn).
func (f *benchFleet) wsURL() string {
	u := f.URL
	if len(f.Nodes) > 0 {
		u = f.Nodes[int(pidSeq.Load())%len(f.Nodes)]
	}
	return "ws" + strings.TrimPrefix(u, "http")
}

// newBenchFleet creates, through the API, a location, an Anywhere fleet in
// it and n computes with their auth tokens.
func newBenchFleet(tb testing.TB, url string, n int) *benchFleet {
	c := newClient(url)
	loc := "custom-place"
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(c.do("CreateLocation", []byte(`{"LocationName": "`+loc+`"}`), nil))
	var fl struct{ FleetAttributes struct{ FleetId string } }
	must(c.do("CreateFleet", []byte(`{"Name": "placement", "ComputeType": "ANYWHERE", "Locations": [{"Location": "`+loc+`"}]}`), &fl))
	f := &benchFleet{URL: url, FleetID: fl.FleetAttributes.FleetId, Location: loc}
	for i := range n {
		name := fmt.Sprintf("host-%d", i)
		must(c.do("RegisterCompute", fmt.Appendf(nil, `{"FleetId": %q, "ComputeName": %q, "Location": %q, "IpAddress": "10.0.0.%d"}`,
			f.FleetID, name, loc, i+1), nil))
		var tok struct{ AuthToken string }
		must(c.do("GetComputeAuthToken", fmt.Appendf(nil, `{"FleetId": %q, "ComputeName": %q}`, f.FleetID, name), &tok))
		f.Computes = append(f.Computes, compute{Name: name, Token: tok.AuthToken})
	}
	return f
}
