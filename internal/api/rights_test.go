package api_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// files writes the credentials file and policies of a test into dir, each
// with a new modification time (the keyring notices by metadata).
type files struct {
	t   *testing.T
	dir string
	n   int
}

func (f *files) write(name, content string) string {
	f.t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.n++
	mt := time.Date(2026, 1, 1, 0, 0, f.n, 0, time.UTC)
	if err := os.Chtimes(path, mt, mt); err != nil {
		f.t.Fatal(err)
	}
	return path
}

const readerPolicy = `{"Version": "2012-10-17", "Statement": [
	{"Sid": "ReadEverything", "Effect": "Allow", "Action": ["gamelift:Describe*", "gamelift:List*", "gamelift:Search*"], "Resource": "*"}]}`

// wantDenied checks an AccessDeniedException answer in AWS JSON 1.1.
func wantDenied(t *testing.T, r *apitest.Response, message string) {
	t.Helper()
	if r.Status != http.StatusBadRequest || r.ErrorType(t) != "AccessDeniedException" || r.Header.Get("X-Amzn-Errortype") != "AccessDeniedException" {
		t.Fatalf("got %d %s, want 400 AccessDeniedException: %s", r.Status, r.ErrorType(t), r.Body)
	}
	if got, _ := r.JSON(t)["message"].(string); got != message {
		t.Errorf("message\n got %s\nwant %s", got, message)
	}
}

func wantNotDenied(t *testing.T, r *apitest.Response) {
	t.Helper()
	if r.Status == http.StatusBadRequest && r.ErrorType(t) == "AccessDeniedException" {
		t.Fatalf("refused: %s", r.Body)
	}
}

// TestKeyRights signs real requests with keys whose policies limit them:
// hand-signed AWS JSON 1.1 and the Go SDK's CBOR, checking the answer
// and its message, the resources each operation names, and that the
// credentials file is taken up again when it changes.
func TestKeyRights(t *testing.T) {
	f := &files{t: t, dir: t.TempDir()}
	f.write("reader.json", readerPolicy)
	creds := f.write("credentials", "AKIDREADER secret-reader reader.json\n")
	var logs syncBuffer
	e := fleettest.New(t, apitest.WithCredentialsFile(creds), logInto(&logs))
	lab := e.Fleet
	other := apitest.CreateAnywhereFleet(t, e.GL, fleettest.Location, "other")
	gs := e.Session(e.Process("host-1", "proc-1"), "lab-session")
	otherGS := strings.Replace(gs, lab, other, 1)
	const acct = "123456789012"
	fleetARN := func(id string) string { return "arn:aws:gamelift:us-west-2:" + acct + ":fleet/" + id }

	// The reader reads, and nothing else.
	wantNotDenied(t, e.API.CallJSONAs(t, "AKIDREADER", "secret-reader", "DescribeFleetAttributes", `{}`))
	if r := e.API.CallJSONAs(t, "AKIDREADER", "secret-reader", "DescribeGameSessions", `{"GameSessionId": "`+gs+`"}`); r.Status != 200 {
		t.Fatalf("reader DescribeGameSessions: %d %s", r.Status, r.Body)
	}
	wantDenied(t, e.API.CallJSONAs(t, "AKIDREADER", "secret-reader", "CreateAlias", `{"Name": "a", "RoutingStrategy": {"Type": "SIMPLE", "FleetId": "`+lab+`"}}`),
		"User: arn:aws:iam::"+acct+":user/AKIDREADER is not authorized to perform: gamelift:CreateAlias on resource: * because no identity-based policy allows the gamelift:CreateAlias action")
	wantDenied(t, e.API.CallJSONAs(t, "AKIDREADER", "secret-reader", "DeleteFleet", `{"FleetId": "`+lab+`"}`),
		"User: arn:aws:iam::"+acct+":user/AKIDREADER is not authorized to perform: gamelift:DeleteFleet on resource: "+fleetARN(lab)+" because no identity-based policy allows the gamelift:DeleteFleet action")

	// Keys added with the fleets' ids: taken up once the files changed
	// and CheckInterval passed.
	f.write("lab.json", `{"Version": "2012-10-17", "Statement": [
		{"Effect": "Allow", "Action": "gamelift:Describe*", "Resource": "*"},
		{"Effect": "Allow", "Action": ["gamelift:CreateGameSession", "gamelift:CreatePlayerSession*", "gamelift:UpdateGameSession"],
		 "Resource": ["arn:aws:gamelift:*:*:fleet/`+lab+`", "arn:aws:gamelift:*::gamesession/`+lab+`/*"]}]}`)
	f.write("ops.json", `{"Statement": [
		{"Effect": "Allow", "Action": "*", "Resource": "*"},
		{"Effect": "Deny", "Action": ["gamelift:DeleteFleet", "gamelift:TagResource", "gamelift:TerminateGameSession"],
		 "Resource": ["`+fleetARN(other)+`", "arn:aws:gamelift:us-west-2::gamesession/`+lab+`/*"]}]}`)
	f.write("credentials", "AKIDREADER secret-reader reader.json\nAKIDLAB secret-lab lab.json\nAKIDOPS:secret-ops ops.json\n")
	if r := e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "DescribeFleetAttributes", `{}`); r.ErrorType(t) != "UnrecognizedClientException" {
		t.Fatalf("a key was taken up before the interval: %d %s", r.Status, r.Body)
	}
	e.Clock.Set(e.Clock.Now().Add(access.CheckInterval))

	// The lab key acts on its fleet and its sessions only.
	r := e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "CreateGameSession", `{"FleetId": "`+lab+`", "MaximumPlayerSessionCount": 2, "Location": "`+fleettest.Location+`"}`)
	wantNotDenied(t, r)
	wantDenied(t, e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "CreateGameSession", `{"FleetId": "`+other+`", "MaximumPlayerSessionCount": 2}`),
		"User: arn:aws:iam::"+acct+":user/AKIDLAB is not authorized to perform: gamelift:CreateGameSession on resource: "+fleetARN(other)+" because no identity-based policy allows the gamelift:CreateGameSession action")
	if r := e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "CreatePlayerSessions", `{"GameSessionId": "`+gs+`", "PlayerIds": ["p1", "p2"]}`); r.Status != 200 {
		t.Fatalf("lab CreatePlayerSessions in its fleet: %d %s", r.Status, r.Body)
	}
	wantDenied(t, e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "CreatePlayerSession", `{"GameSessionId": "`+otherGS+`", "PlayerId": "p3"}`),
		"User: arn:aws:iam::"+acct+":user/AKIDLAB is not authorized to perform: gamelift:CreatePlayerSession on resource: "+otherGS+" because no identity-based policy allows the gamelift:CreatePlayerSession action")
	// A fleet named by an ARN of another region and account is the fleet
	// the operation reads: the policy sees its own ARN.
	wantDenied(t, e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "UpdateFleetAttributes", `{"FleetId": "arn:aws:gamelift:eu-central-1:999999999999:fleet/`+lab+`", "Name": "x"}`),
		"User: arn:aws:iam::"+acct+":user/AKIDLAB is not authorized to perform: gamelift:UpdateFleetAttributes on resource: "+fleetARN(lab)+" because no identity-based policy allows the gamelift:UpdateFleetAttributes action")

	// Explicit denies win over the ops key's Allow *.
	wantDenied(t, e.API.CallJSONAs(t, "AKIDOPS", "secret-ops", "DeleteFleet", `{"FleetId": "`+fleetARN(other)+`"}`),
		"User: arn:aws:iam::"+acct+":user/AKIDOPS is not authorized to perform: gamelift:DeleteFleet on resource: "+fleetARN(other)+" with an explicit deny in an identity-based policy")
	wantDenied(t, e.API.CallJSONAs(t, "AKIDOPS", "secret-ops", "TagResource", `{"ResourceARN": "arn:aws:gamelift:eu-central-1:999999999999:fleet/`+other+`", "Tags": [{"Key": "k", "Value": "v"}]}`),
		"User: arn:aws:iam::"+acct+":user/AKIDOPS is not authorized to perform: gamelift:TagResource on resource: "+fleetARN(other)+" with an explicit deny in an identity-based policy")
	wantNotDenied(t, e.API.CallJSONAs(t, "AKIDOPS", "secret-ops", "TagResource", `{"ResourceARN": "`+fleetARN(lab)+`", "Tags": [{"Key": "k", "Value": "v"}]}`))
	wantNotDenied(t, e.API.CallJSONAs(t, "AKIDOPS", "secret-ops", "DescribeFleetAttributes", `{"FleetIds": ["`+lab+`", "`+other+`"]}`))

	// The same in CBOR through the Go SDK: a 400 whose code and message
	// the SDK reports.
	_, err := e.API.ClientAs("AKIDOPS", "secret-ops").TerminateGameSession(context.Background(),
		&gamelift.TerminateGameSessionInput{GameSessionId: aws.String(gs), TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" || !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Fatalf("CBOR TerminateGameSession: %v", err)
	}
	if want := "User: arn:aws:iam::" + acct + ":user/AKIDOPS is not authorized to perform: gamelift:TerminateGameSession on resource: " + gs +
		" with an explicit deny in an identity-based policy"; ae.ErrorMessage() != want {
		t.Errorf("CBOR message\n got %s\nwant %s", ae.ErrorMessage(), want)
	}
	if _, err := e.API.ClientAs("AKIDLAB", "secret-lab").DescribeGameSessions(context.Background(),
		&gamelift.DescribeGameSessionsInput{FleetId: aws.String(other)}); err != nil {
		t.Errorf("CBOR DescribeGameSessions by the lab key: %v", err)
	}
	if _, err := e.API.ClientAs("AKIDLAB", "secret-lab").CreateGameSessionQueue(context.Background(),
		&gamelift.CreateGameSessionQueueInput{Name: aws.String("q")}); !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" {
		t.Errorf("CBOR CreateGameSessionQueue by the lab key: %v", err)
	}

	// Rotated, revoked, a broken policy: the keys in use stay until the
	// files are fixed.
	f.write("credentials", "AKIDREADER secret-reader-2 reader.json\nAKIDOPS:secret-ops ops.json\n")
	e.Clock.Set(e.Clock.Now().Add(access.CheckInterval))
	if r := e.API.CallJSONAs(t, "AKIDREADER", "secret-reader", "DescribeFleetAttributes", `{}`); r.ErrorType(t) != "InvalidSignatureException" {
		t.Errorf("the old secret after rotation: %d %s", r.Status, r.Body)
	}
	if r := e.API.CallJSONAs(t, "AKIDREADER", "secret-reader-2", "DescribeFleetAttributes", `{}`); r.Status != 200 {
		t.Errorf("the new secret after rotation: %d %s", r.Status, r.Body)
	}
	if r := e.API.CallJSONAs(t, "AKIDLAB", "secret-lab", "DescribeFleetAttributes", `{}`); r.ErrorType(t) != "UnrecognizedClientException" {
		t.Errorf("a revoked key: %d %s", r.Status, r.Body)
	}
	f.write("ops.json", `{"Statement": [{"Effect": "Allow", "Action": "*"}]}`)
	e.Clock.Set(e.Clock.Now().Add(access.CheckInterval))
	wantDenied(t, e.API.CallJSONAs(t, "AKIDOPS", "secret-ops", "DeleteFleet", `{"FleetId": "`+other+`"}`),
		"User: arn:aws:iam::"+acct+":user/AKIDOPS is not authorized to perform: gamelift:DeleteFleet on resource: "+fleetARN(other)+" with an explicit deny in an identity-based policy")
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "the credentials file changed but cannot be used") ||
		!strings.Contains(l, filepath.Join(f.dir, "ops.json")) || !strings.Contains(l, "exactly one of Resource and NotResource") {
		t.Errorf("the broken policy was not logged as an error:\n%s", l)
	}
}

// An agent's report needs RegisterCompute on its fleet from a key with a
// policy: what the agent's key needs anyway.
func TestAgentReportRights(t *testing.T) {
	f := &files{t: t, dir: t.TempDir()}
	f.write("reader.json", readerPolicy)
	f.write("agent.json", `{"Statement": {"Effect": "Allow", "Action": ["gamelift:RegisterCompute", "gamelift:DeregisterCompute",
		"gamelift:GetComputeAuthToken", "gamelift:DescribeRuntimeConfiguration"], "Resource": "arn:aws:gamelift:*:*:fleet/*"}}`)
	creds := f.write("credentials", "AKIDREADER secret-reader reader.json\nAKIDAGENT secret-agent agent.json\n")
	e := newReportEnv(t, []apitest.Option{apitest.WithCredentialsFile(creds)})
	post := func(key, secret string) *apitest.Response {
		req, _ := http.NewRequest(http.MethodPost, e.URL+api.AgentReportPath,
			strings.NewReader(`{"FleetId":"`+e.fleet+`","ComputeName":"host","Kind":"INVALID_PATH","LaunchPath":"/x"}`))
		req.Header.Set("Content-Type", "application/json")
		apitest.Sign(t, req, key, secret, time.Now())
		return e.Do(t, req)
	}
	wantDenied(t, post("AKIDREADER", "secret-reader"), "User: arn:aws:iam::123456789012:user/AKIDREADER is not authorized to perform: "+
		"gamelift:RegisterCompute on resource: arn:aws:gamelift:us-west-2:123456789012:fleet/"+e.fleet+
		" because no identity-based policy allows the gamelift:RegisterCompute action")
	if r := post("AKIDAGENT", "secret-agent"); r.Status != 200 {
		t.Errorf("the agent's key: %d %s", r.Status, r.Body)
	}
}

// TestResources pins the resource ARNs operations name, as policies see
// them.
func TestResources(t *testing.T) {
	a := game.Account{Region: "us-west-2", ID: "123456789012"}
	arn := func(res string) string { return "arn:aws:gamelift:us-west-2:123456789012:" + res }
	gs := "arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-x/gsess-1"
	for _, tc := range []struct {
		name string
		in   any
		want []string
	}{
		{"none", &wire.ListFleetsInput{}, nil},
		{"fleets, repeated and as ARN", &wire.DescribeFleetAttributesInput{FleetIds: []string{"fleet-1", "fleet-2", "arn:aws:gamelift:eu-west-1:1:fleet/fleet-1"}},
			[]string{arn("fleet/fleet-1"), arn("fleet/fleet-2")}},
		{"fleet and alias", &wire.CreateGameSessionInput{FleetId: aws.String("fleet-1"), AliasId: aws.String("alias-1"), GameSessionId: aws.String("mine")},
			[]string{arn("fleet/fleet-1"), arn("alias/alias-1")}},
		{"game session", &wire.UpdateGameSessionInput{GameSessionId: aws.String(gs)}, []string{gs}},
		{"queue by ARN", &wire.StartGameSessionPlacementInput{GameSessionQueueName: aws.String(arn("gamesessionqueue/q"))}, []string{arn("gamesessionqueue/q")}},
		{"queues", &wire.DescribeGameSessionQueuesInput{Names: []string{"q1", "q2"}}, []string{arn("gamesessionqueue/q1"), arn("gamesessionqueue/q2")}},
		{"configuration, not its rule set", &wire.CreateMatchmakingConfigurationInput{Name: aws.String("c"), RuleSetName: aws.String("r")},
			[]string{arn("matchmakingconfiguration/c")}},
		{"configurations filtered by rule set", &wire.DescribeMatchmakingConfigurationsInput{RuleSetName: aws.String("r")}, nil},
		{"backfill", &wire.StartMatchBackfillInput{ConfigurationName: aws.String("c"), GameSessionArn: aws.String(gs)},
			[]string{arn("matchmakingconfiguration/c"), gs}},
		{"rule set", &wire.DeleteMatchmakingRuleSetInput{Name: aws.String("r")}, []string{arn("matchmakingruleset/r")}},
		{"location", &wire.DeleteLocationInput{LocationName: aws.String(arn("location/custom-x"))}, []string{arn("location/custom-x")}},
		{"compute: its fleet", &wire.DeregisterComputeInput{FleetId: aws.String("fleet-1"), ComputeName: aws.String("c")}, []string{arn("fleet/fleet-1")}},
		{"tagging, another account", &wire.TagResourceRequest{ResourceARN: aws.String("arn:aws:gamelift:eu-west-1:999999999999:matchmakingruleset/r")},
			[]string{arn("matchmakingruleset/r")}},
		{"container group definition, any version", &wire.DescribeContainerGroupDefinitionInput{Name: aws.String(arn("containergroupdefinition/g:3"))},
			[]string{arn("containergroupdefinition/g")}},
		{"container group definition created", &wire.CreateContainerGroupDefinitionInput{Name: aws.String("g")}, []string{arn("containergroupdefinition/g")}},
		{"tagging a container group definition's version", &wire.TagResourceRequest{ResourceARN: aws.String(arn("containergroupdefinition/g:2"))},
			[]string{arn("containergroupdefinition/g")}},
		{"container fleets filtered by definition", &wire.ListContainerFleetsInput{ContainerGroupDefinitionName: aws.String("g")}, nil},
		{"tagging, another type", &wire.ListTagsForResourceRequest{ResourceARN: aws.String("arn:aws:gamelift:us-west-2:1:build/b")},
			[]string{"arn:aws:gamelift:us-west-2:1:build/b"}},
	} {
		if got := api.Resources(a, tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Anylift's own operations are granted as gamelift:<Operation> on the
// fleet they name: a reader may look at the status, not inject a fault;
// a key may inject faults into its own fleet only.
func TestExtensionRights(t *testing.T) {
	f := &files{t: t, dir: t.TempDir()}
	f.write("reader.json", readerPolicy)
	e := fleettest.New(t, apitest.WithFaultInjection, apitest.WithCredentialsFile(f.write("credentials", "AKIDREADER secret-reader reader.json\n")))
	lab := e.Fleet
	other := apitest.CreateAnywhereFleet(t, e.GL, fleettest.Location, "other")
	f.write("tester.json", `{"Statement": [{"Effect": "Allow", "Action": ["gamelift:InjectFault", "gamelift:ClearFaults"], "Resource": "arn:aws:gamelift:*:*:fleet/`+lab+`"}]}`)
	f.write("credentials", "AKIDREADER secret-reader reader.json\nAKIDTESTER secret-tester tester.json\n")
	e.Clock.Set(e.Clock.Now().Add(access.CheckInterval))

	const user = "User: arn:aws:iam::123456789012:user/"
	fault := func(fleet string) map[string]any {
		return map[string]any{"Fault": map[string]any{"Kind": "PLACEMENT_FAILURE", "FleetId": fleet, "Count": 1}}
	}
	if r := e.API.CallExtensionAs(t, "AKIDREADER", "secret-reader", "DescribeStatus", `{}`); r.Status != http.StatusOK {
		t.Fatalf("reader DescribeStatus: %d %s", r.Status, r.Body)
	}
	wantDenied(t, e.API.CallExtensionAs(t, "AKIDREADER", "secret-reader", "InjectFault", fault(lab)),
		user+"AKIDREADER is not authorized to perform: gamelift:InjectFault on resource: arn:aws:gamelift:us-west-2:123456789012:fleet/"+lab+
			" because no identity-based policy allows the gamelift:InjectFault action")
	if r := e.API.CallExtensionAs(t, "AKIDTESTER", "secret-tester", "InjectFault", fault(lab)); r.Status != http.StatusOK {
		t.Fatalf("tester InjectFault on its fleet: %d %s", r.Status, r.Body)
	}
	wantDenied(t, e.API.CallExtensionAs(t, "AKIDTESTER", "secret-tester", "InjectFault", fault(other)),
		user+"AKIDTESTER is not authorized to perform: gamelift:InjectFault on resource: arn:aws:gamelift:us-west-2:123456789012:fleet/"+other+
			" because no identity-based policy allows the gamelift:InjectFault action")
	wantDenied(t, e.API.CallExtensionAs(t, "AKIDTESTER", "secret-tester", "ClearFaults", `{}`),
		user+"AKIDTESTER is not authorized to perform: gamelift:ClearFaults on resource: * because no identity-based policy allows the gamelift:ClearFaults action")
}
