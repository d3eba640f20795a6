package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/store"
)

const (
	computeFleet = "fleet-11111111-2222-3333-4444-555555555555"
	otherFleet   = "fleet-99999999-2222-3333-4444-555555555555"
	fleetARNBase = "arn:aws:gamelift:us-west-2:123456789012:fleet/"
)

// seedFleet stores an ACTIVE Anywhere fleet in the given custom locations,
// creating the locations too.
func seedFleet(t *testing.T, env *apitest.Env, id string, locations ...string) {
	t.Helper()
	err := env.Server.Store().Update(context.Background(), func(tx store.Tx) error {
		for _, l := range locations {
			if _, err := tx.GetLocation(l); !game.IsKind(err, game.NotFound) {
				continue
			}
			err := tx.InsertLocation(&game.Location{Name: l, ARN: "arn:aws:gamelift:us-west-2:123456789012:location/" + l})
			if err != nil {
				return err
			}
		}
		return tx.InsertFleet(&game.Fleet{
			ID: id, ARN: fleetARNBase + id, Name: "f", Status: game.FleetActive,
			ComputeType: "ANYWHERE", Locations: locations, CreationTime: time.Now(),
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func register(gl *gamelift.Client, fleet, name, location, ip string) (*gamelift.RegisterComputeOutput, error) {
	return gl.RegisterCompute(context.Background(), &gamelift.RegisterComputeInput{
		FleetId: aws.String(fleet), ComputeName: aws.String(name),
		Location: aws.String(location), IpAddress: aws.String(ip),
	})
}

func TestRegisterComputeWithGoSDK(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, append(opts, func(c *server.Config) {
				c.SDKEndpoint, c.AgentEndpoint = "wss://games.example:443", "https://games.example"
			})...)
			seedFleet(t, env, computeFleet, "custom-a", "custom-b")
			gl := env.Client()
			ctx := context.Background()
			out, err := register(gl, fleetARNBase+computeFleet, "host-1", "custom-a", "10.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			c := out.Compute
			checks := map[string][2]string{
				"FleetId":     {aws.ToString(c.FleetId), computeFleet},
				"FleetArn":    {aws.ToString(c.FleetArn), fleetARNBase + computeFleet},
				"ComputeName": {aws.ToString(c.ComputeName), "host-1"},
				"ComputeArn":  {aws.ToString(c.ComputeArn), "arn:aws:gamelift:us-west-2:123456789012:compute/host-1"},
				"IpAddress":   {aws.ToString(c.IpAddress), "10.0.0.1"},
				"Status":      {string(c.ComputeStatus), "Active"}, // not the model's enum spelling: the SDK keeps it as sent
				"Agent":       {aws.ToString(c.GameLiftAgentEndpoint), "https://games.example"},
				"Location":    {aws.ToString(c.Location), "custom-a"},
				"Endpoint":    {aws.ToString(c.GameLiftServiceSdkEndpoint), "wss://games.example:443"},
			}
			for k, v := range checks {
				if v[0] != v[1] {
					t.Errorf("%s = %q, want %q", k, v[0], v[1])
				}
			}
			if c.CreationTime == nil || time.Since(*c.CreationTime) > time.Minute {
				t.Errorf("CreationTime = %v", c.CreationTime)
			}

			// Identical re-registration returns the compute as it was.
			again, err := register(gl, computeFleet, "host-1", "custom-a", "10.0.0.1")
			if err != nil {
				t.Fatalf("identical re-registration: %v", err)
			}
			if !again.Compute.CreationTime.Equal(*c.CreationTime) {
				t.Errorf("re-registration changed CreationTime: %v, was %v", again.Compute.CreationTime, c.CreationTime)
			}
			_, err = register(gl, computeFleet, "host-1", "custom-a", "10.0.0.2")
			var conflict *types.ConflictException
			if !errors.As(err, &conflict) {
				t.Fatalf("same name, other IP: %v, want ConflictException", err)
			}
			// The same name in another fleet is another compute.
			seedFleet(t, env, otherFleet, "custom-a")
			if _, err := register(gl, otherFleet, "host-1", "custom-a", "10.0.0.9"); err != nil {
				t.Fatalf("same name in another fleet: %v", err)
			}
			d, err := gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(computeFleet), ComputeName: c.ComputeArn})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(d.Compute.IpAddress) != "10.0.0.1" || aws.ToString(d.Compute.GameLiftServiceSdkEndpoint) != "wss://games.example:443" ||
				d.Compute.ComputeStatus != "Active" || aws.ToString(d.Compute.GameLiftAgentEndpoint) != "https://games.example" {
				t.Errorf("DescribeCompute by ARN = %+v", d.Compute)
			}
		})
	}
}

func TestRegisterComputeRefusals(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleet(t, env, computeFleet, "custom-a")
			gl := env.Client()
			ctx := context.Background()
			var invalid *types.InvalidRequestException
			var nf *types.NotFoundException
			// The model lists no NotFoundException for RegisterCompute or
			// ListCompute: the answer is the modeled InvalidRequestException.
			_, err := register(gl, otherFleet, "h", "custom-a", "10.0.0.1")
			if !errors.As(err, &invalid) || !strings.Contains(err.Error(), otherFleet) {
				t.Errorf("unknown fleet: got %v, want InvalidRequestException naming the fleet", err)
			}
			_, err = gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(otherFleet)})
			if !errors.As(err, &invalid) {
				t.Errorf("ListCompute of unknown fleet: %v, want InvalidRequestException", err)
			}
			cases := []struct {
				name string
				in   gamelift.RegisterComputeInput
				want any
				msg  string
			}{
				{"foreign location", gamelift.RegisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h"), Location: aws.String("custom-z"), IpAddress: aws.String("10.0.0.1")}, &invalid, "custom-z"},
				{"no location", gamelift.RegisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h"), IpAddress: aws.String("10.0.0.1")}, &invalid, "Location"},
				{"no IP", gamelift.RegisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h"), Location: aws.String("custom-a"), DnsName: aws.String("h.example")}, &invalid, "IpAddress"},
				{"bad name", gamelift.RegisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("a b"), Location: aws.String("custom-a"), IpAddress: aws.String("10.0.0.1")}, &invalid, "computeName"},
				{"bad IP", gamelift.RegisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h"), Location: aws.String("custom-a"), IpAddress: aws.String("not-an-ip")}, &invalid, "ipAddress"},
			}
			for _, tc := range cases {
				_, err := gl.RegisterCompute(ctx, &tc.in)
				if !errors.As(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("%s: got %v, want %T naming %q", tc.name, err, tc.want, tc.msg)
				}
			}
			list, err := gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(computeFleet)})
			if err != nil || len(list.ComputeList) != 0 {
				t.Errorf("refused registrations left computes: %+v %v", list, err)
			}
			_, err = gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h")})
			if !errors.As(err, &nf) {
				t.Errorf("DescribeCompute of absent compute: %v, want NotFoundException", err)
			}
			_, err = gl.DeregisterCompute(ctx, &gamelift.DeregisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("h")})
			if !errors.As(err, &nf) {
				t.Errorf("DeregisterCompute of absent compute: %v, want NotFoundException", err)
			}
		})
	}
}

// apiErrorCode is the error code of an AWS API error, or "".
func apiErrorCode(err error) string {
	var e smithy.APIError
	if errors.As(err, &e) {
		return e.ErrorCode()
	}
	return ""
}

func TestListComputeWithGoSDK(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleet(t, env, computeFleet, "custom-a", "custom-b")
			gl := env.Client()
			ctx := context.Background()
			for i, n := range []string{"h-3", "h-1", "h-4", "h-2", "h-5"} {
				loc := []string{"custom-a", "custom-b"}[i%2]
				if _, err := register(gl, computeFleet, n, loc, "10.0.0.1"); err != nil {
					t.Fatal(err)
				}
			}
			list := func(in *gamelift.ListComputeInput) (names []string, pages int) {
				t.Helper()
				in.FleetId, in.Limit = aws.String(computeFleet), aws.Int32(2)
				p := gamelift.NewListComputePaginator(gl, in)
				for p.HasMorePages() {
					page, err := p.NextPage(ctx)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					for _, c := range page.ComputeList {
						names = append(names, aws.ToString(c.ComputeName))
					}
				}
				return names, pages
			}
			if names, pages := list(&gamelift.ListComputeInput{}); strings.Join(names, ",") != "h-1,h-2,h-3,h-4,h-5" || pages != 3 {
				t.Errorf("ListCompute = %v in %d pages", names, pages)
			}
			if names, _ := list(&gamelift.ListComputeInput{Location: aws.String("custom-b")}); strings.Join(names, ",") != "h-1,h-2" {
				t.Errorf("ListCompute custom-b = %v", names)
			}
			if names, _ := list(&gamelift.ListComputeInput{ComputeStatus: types.ListComputeInputStatusImpaired}); len(names) != 0 {
				t.Errorf("ListCompute IMPAIRED = %v", names)
			}
			if names, _ := list(&gamelift.ListComputeInput{ComputeStatus: types.ListComputeInputStatusActive}); len(names) != 5 {
				t.Errorf("ListCompute ACTIVE = %v", names)
			}
			// The filter also takes the spelling the answers use.
			if names, _ := list(&gamelift.ListComputeInput{ComputeStatus: "Active"}); len(names) != 5 {
				t.Errorf("ListCompute Active = %v", names)
			}
			out, err := gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(computeFleet), Limit: aws.Int32(1)})
			if err != nil || len(out.ComputeList) != 1 || out.ComputeList[0].ComputeStatus != "Active" ||
				aws.ToString(out.ComputeList[0].GameLiftAgentEndpoint) != env.Server.URL() {
				t.Errorf("ListCompute = %+v (%v), want Active and the agent endpoint %s", out, err, env.Server.URL())
			}
		})
	}
}

var tokenPattern = regexp.MustCompile(`^[a-zA-Z0-9\-]+$`)

func TestComputeAuthTokenWithGoSDK(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			seedFleet(t, env, computeFleet, "custom-a")
			seedFleet(t, env, otherFleet, "custom-a")
			gl := env.Client()
			svc := env.Server.Computes()
			ctx := context.Background()
			for _, f := range []string{computeFleet, otherFleet} {
				for _, n := range []string{"host-1", "host-2"} {
					if _, err := register(gl, f, n, "custom-a", "10.0.0.1"); err != nil {
						t.Fatal(err)
					}
				}
			}
			before := time.Now()
			out, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleetARNBase + computeFleet), ComputeName: aws.String("host-1")})
			if err != nil {
				t.Fatal(err)
			}
			tok := aws.ToString(out.AuthToken)
			if len(tok) < 40 || len(tok) > 64 || !tokenPattern.MatchString(tok) {
				t.Errorf("AuthToken %d chars, want 40..64 of [a-zA-Z0-9-]", len(tok))
			}
			if aws.ToString(out.FleetId) != computeFleet || aws.ToString(out.FleetArn) != fleetARNBase+computeFleet ||
				aws.ToString(out.ComputeName) != "host-1" || !strings.HasSuffix(aws.ToString(out.ComputeArn), ":compute/host-1") {
				t.Errorf("GetComputeAuthToken = %+v", out)
			}
			if exp := out.ExpirationTimestamp.Sub(before); exp < 14*time.Minute || exp > 16*time.Minute {
				t.Errorf("token expires in %v, want 15 minutes", exp)
			}
			second, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("host-1")})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(second.AuthToken) == tok {
				t.Error("two calls returned the same token")
			}
			checkStoredHash(t, env, tok)

			computeARN := aws.ToString(out.ComputeArn)
			for _, tc := range []struct {
				name, token, fleet, compute string
				ok                          bool
			}{
				{"right", tok, computeFleet, "host-1", true},
				{"by ARNs", tok, fleetARNBase + computeFleet, computeARN, true},
				{"earlier token still valid", aws.ToString(second.AuthToken), computeFleet, "host-1", true},
				{"other compute", tok, computeFleet, "host-2", false},
				{"other fleet", tok, otherFleet, "host-1", false},
				{"unknown token", otherFirst(tok), computeFleet, "host-1", false},
				{"empty token", "", computeFleet, "host-1", false},
			} {
				err := svc.CheckAuthToken(ctx, tc.token, tc.fleet, tc.compute)
				if tc.ok && err != nil || !tc.ok && !game.IsKind(err, game.Unauthorized) {
					t.Errorf("%s: CheckAuthToken = %v", tc.name, err)
				}
			}

			var nf *types.NotFoundException
			_, err = gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("host-9")})
			if !errors.As(err, &nf) {
				t.Errorf("token for absent compute: %v, want NotFoundException", err)
			}
			_, err = gl.DeregisterCompute(ctx, &gamelift.DeregisterComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String(computeARN)})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.CheckAuthToken(ctx, tok, computeFleet, "host-1"); !game.IsKind(err, game.Unauthorized) {
				t.Errorf("token of a deregistered compute: %v, want Unauthorized", err)
			}
			_, err = gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("host-1")})
			if !errors.As(err, &nf) {
				t.Errorf("DescribeCompute after deregistration: %v, want NotFoundException", err)
			}
			if _, err := gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(otherFleet), ComputeName: aws.String("host-1")}); err != nil {
				t.Errorf("the other fleet's compute of the same name: %v", err)
			}
		})
	}
}

// checkStoredHash checks that the store holds the token's SHA-256, not the
// token itself.
func checkStoredHash(t *testing.T, env *apitest.Env, tok string) {
	t.Helper()
	sum := sha256.Sum256([]byte(tok))
	err := env.Server.Store().View(context.Background(), func(tx store.Tx) error {
		if _, err := tx.GetAuthToken(tok); !game.IsKind(err, game.NotFound) {
			t.Errorf("the token itself is a stored key: %v", err)
		}
		a, err := tx.GetAuthToken(hex.EncodeToString(sum[:]))
		if err == nil && a.Secret != "" {
			t.Error("the stored token carries its secret")
		}
		return err
	})
	if err != nil {
		t.Errorf("token not stored by its SHA-256: %v", err)
	}
}

// clock is a test clock that starts at the real time and moves on demand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestComputeAuthTokenExpiry(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			clk := &clock{now: time.Now()}
			env := apitest.Start(t, append(opts, func(c *server.Config) {
				c.Now = clk.Now
				c.AuthTokenTTL = 2 * time.Minute
			})...)
			seedFleet(t, env, computeFleet, "custom-a")
			gl := env.Client()
			svc := env.Server.Computes()
			ctx := context.Background()
			if _, err := register(gl, computeFleet, "host-1", "custom-a", "10.0.0.1"); err != nil {
				t.Fatal(err)
			}
			issued := clk.Now().Truncate(time.Millisecond)
			out, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(computeFleet), ComputeName: aws.String("host-1")})
			if err != nil {
				t.Fatal(err)
			}
			if want := issued.Add(2 * time.Minute); !out.ExpirationTimestamp.Equal(want) {
				t.Errorf("ExpirationTimestamp = %v, want %v", out.ExpirationTimestamp, want)
			}
			tok := aws.ToString(out.AuthToken)
			clk.Add(2*time.Minute - time.Millisecond)
			env.Server.Service().Sweep(ctx)
			if err := svc.CheckAuthToken(ctx, tok, computeFleet, "host-1"); err != nil {
				t.Errorf("a millisecond before expiry: %v", err)
			}
			clk.Add(time.Millisecond)
			if err := svc.CheckAuthToken(ctx, tok, computeFleet, "host-1"); !game.IsKind(err, game.Unauthorized) {
				t.Errorf("at expiry: %v, want Unauthorized", err)
			}
			env.Server.Service().Sweep(ctx)
			sum := sha256.Sum256([]byte(tok))
			err = env.Server.Store().View(ctx, func(tx store.Tx) error {
				_, err := tx.GetAuthToken(hex.EncodeToString(sum[:]))
				return err
			})
			if !game.IsKind(err, game.NotFound) {
				t.Errorf("expired token after the sweep: %v, want NotFound", err)
			}
		})
	}
}

func TestComputesWithJSON(t *testing.T) {
	var logs lockedBuffer
	env := apitest.Start(t, func(c *server.Config) {
		c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var lastToken string
	defer func() {
		if tok := lastToken; tok != "" && strings.Contains(logs.String(), tok) {
			t.Error("an auth token reached the log")
		}
	}()
	seedFleet(t, env, computeFleet, "custom-a")
	r := env.CallJSON(t, "ListCompute", `{"FleetId": "`+computeFleet+`"}`)
	if list, ok := r.JSON(t)["ComputeList"].([]any); r.Status != http.StatusOK || !ok || len(list) != 0 {
		t.Errorf("empty ListCompute = %d %s, want an empty ComputeList", r.Status, r.Body)
	}
	r = env.CallJSON(t, "RegisterCompute", `{"FleetId": "`+computeFleet+`", "ComputeName": "json-1", "Location": "custom-a", "IpAddress": "192.168.1.2", "DnsName": "json-1.example"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("RegisterCompute: %d %s", r.Status, r.Body)
	}
	c, _ := r.JSON(t)["Compute"].(map[string]any)
	if c["ComputeStatus"] != "Active" || c["DnsName"] != "json-1.example" || c["IpAddress"] != "192.168.1.2" ||
		c["GameLiftAgentEndpoint"] != env.Server.URL() {
		t.Errorf("Compute = %v", c)
	}
	if _, ok := c["CreationTime"].(float64); !ok {
		t.Errorf("CreationTime = %#v, want epoch seconds", c["CreationTime"])
	}
	if ep, _ := c["GameLiftServiceSdkEndpoint"].(string); ep != "ws://"+env.Server.Addr() {
		t.Errorf("GameLiftServiceSdkEndpoint = %q, want ws://%s", ep, env.Server.Addr())
	}
	r = env.CallJSON(t, "GetComputeAuthToken", `{"FleetId": "`+computeFleet+`", "ComputeName": "json-1"}`)
	m := r.JSON(t)
	tok, _ := m["AuthToken"].(string)
	if r.Status != http.StatusOK || !tokenPattern.MatchString(tok) {
		t.Errorf("GetComputeAuthToken = %d %s", r.Status, r.Body)
	}
	lastToken = tok
	if _, ok := m["ExpirationTimestamp"].(float64); !ok {
		t.Errorf("ExpirationTimestamp = %#v, want epoch seconds", m["ExpirationTimestamp"])
	}
	for _, tc := range []struct{ op, body, want string }{
		{"RegisterCompute", `{"FleetId": "` + computeFleet + `", "ComputeName": "json-1", "Location": "custom-a", "IpAddress": "192.168.1.3"}`, "ConflictException"},
		{"RegisterCompute", `{"FleetId": "` + computeFleet + `", "ComputeName": "json-2", "IpAddress": "192.168.1.3"}`, "InvalidRequestException"},
		{"RegisterCompute", `{"FleetId": "` + computeFleet + `", "ComputeName": "json-2", "Location": "custom-a", "IpAddress": 7}`, "InvalidRequestException"},
		{"ListCompute", `{"FleetId": "` + computeFleet + `", "ComputeStatus": "PENDING"}`, "InvalidRequestException"},
		{"ListCompute", `{"FleetId": "` + computeFleet + `", "ComputeStatus": "Actives"}`, "InvalidRequestException"},
		{"ListCompute", `{"FleetId": "` + computeFleet + `", "NextToken": "garbage"}`, "InvalidRequestException"},
		{"DescribeCompute", `{"FleetId": "` + computeFleet + `", "ComputeName": "json-9"}`, "NotFoundException"},
		{"GetComputeAuthToken", `{"FleetId": "` + otherFleet + `", "ComputeName": "json-1"}`, "NotFoundException"},
		{"DeregisterCompute", `{"FleetId": "` + computeFleet + `"}`, "InvalidRequestException"},
	} {
		r := env.CallJSON(t, tc.op, tc.body)
		if r.Status != http.StatusBadRequest || r.ErrorType(t) != tc.want {
			t.Errorf("%s %s: %d %s, want %s", tc.op, tc.body, r.Status, r.Body, tc.want)
		}
	}
	r = env.CallJSON(t, "ListCompute", `{"FleetId": "`+computeFleet+`"}`)
	if list, _ := r.JSON(t)["ComputeList"].([]any); len(list) != 1 {
		t.Errorf("after refusals ListCompute = %s, want the one compute", r.Body)
	}
	if r = env.CallJSON(t, "DeregisterCompute", `{"FleetId": "`+computeFleet+`", "ComputeName": "json-1"}`); r.Status != http.StatusOK {
		t.Errorf("DeregisterCompute: %d %s", r.Status, r.Body)
	}
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// otherFirst returns tok with its first character changed.
func otherFirst(tok string) string {
	if tok[0] == 'x' {
		return "y" + tok[1:]
	}
	return "x" + tok[1:]
}
