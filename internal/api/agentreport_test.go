package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// reportEnv is a server with an Anywhere fleet and a compute "host".
type reportEnv struct {
	*apitest.Env
	gl    *gamelift.Client
	fleet string
}

func newReportEnv(t *testing.T, opts []apitest.Option) *reportEnv {
	t.Helper()
	e := &reportEnv{Env: apitest.Start(t, opts...)}
	e.gl = e.Client()
	ctx := context.Background()
	if _, err := e.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-rep")}); err != nil {
		t.Fatal(err)
	}
	out, err := e.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{
		Name: aws.String("rep"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String("custom-rep")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.fleet = aws.ToString(out.FleetAttributes.FleetId)
	if _, err := register(e.gl, e.fleet, "host", "custom-rep", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	return e
}

// process stores a server process of the compute in status.
func (e *reportEnv) process(t *testing.T, pid, status string) {
	t.Helper()
	now := time.Now()
	p := &game.Process{FleetID: e.fleet, ComputeName: "host", PID: pid, Location: "custom-rep", Status: status,
		Connected: status != game.ProcessTerminated, CreationTime: now, LastHealthy: now, Healthy: true}
	if status == game.ProcessTerminated {
		p.TerminationTime = now
	}
	if err := e.Server.Store().Update(context.Background(), func(tx store.Tx) error { return tx.PutProcess(p) }); err != nil {
		t.Fatal(err)
	}
}

// report posts a signed report and returns the status and body.
func (e *reportEnv) report(t *testing.T, r api.AgentReport, sign bool) (int, map[string]any) {
	t.Helper()
	if r.FleetId == "" {
		r.FleetId = e.fleet
	}
	if r.ComputeName == "" {
		r.ComputeName = "host"
	}
	body, _ := json.Marshal(r)
	return e.post(t, body, sign)
}

func (e *reportEnv) post(t *testing.T, body []byte, sign bool) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL+api.AgentReportPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sign {
		apitest.Sign(t, req, apitest.AccessKey, apitest.SecretKey, time.Now())
	}
	resp := e.Do(t, req)
	return resp.Status, resp.JSON(t)
}

func (e *reportEnv) eventCodes(t *testing.T, resource string) []string {
	t.Helper()
	out, err := e.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(e.fleet)})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, ev := range out.Events {
		if aws.ToString(ev.ResourceId) == resource {
			codes = append(codes, string(ev.EventCode))
		}
	}
	return codes
}

// TestAgentReports pins the event each report writes, and that a report
// never writes a second event for a process the service already ended
// with one.
func TestAgentReports(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newReportEnv(t, opts)
			for _, tc := range []struct {
				name, pid, status string
				rep               api.AgentReport
				want              string
			}{
				{"invalid path", "", "", api.AgentReport{Kind: "INVALID_PATH", LaunchPath: "/x"}, "SERVER_PROCESS_INVALID_PATH"},
				{"never connected", "p-never", "", api.AgentReport{Kind: "EXITED", ExitCode: 1}, "SERVER_PROCESS_CRASHED"},
				{"never connected, stopped", "p-stopped", "", api.AgentReport{Kind: "EXITED", Stopped: "TERMINATED"}, ""},
				{"live, exits on its own", "p-live", game.ProcessActive, api.AgentReport{Kind: "EXITED", Signal: "killed", ExitCode: -1}, "SERVER_PROCESS_CRASHED"},
				{"the same exit reported again", "p-live", "", api.AgentReport{Kind: "EXITED", Signal: "killed", ExitCode: -1}, ""},
				{"live, obeys a graceful stop", "p-obeys", game.ProcessActive, api.AgentReport{Kind: "EXITED", Stopped: "TERMINATED"}, ""},
				{"live, killed after the stop timeout", "p-killed", game.ProcessActive, api.AgentReport{Kind: "EXITED", Signal: "killed", Stopped: "KILLED"}, "SERVER_PROCESS_FORCE_TERMINATED"},
				{"ended with ProcessEnding, exit 0", "p-clean", game.ProcessTerminated, api.AgentReport{Kind: "EXITED"}, ""},
				{"ended with ProcessEnding, exit 3", "p-unclean", game.ProcessTerminated, api.AgentReport{Kind: "EXITED", ExitCode: 3}, "SERVER_PROCESS_TERMINATED_UNHEALTHY"},
			} {
				if tc.status != "" {
					e.process(t, tc.pid, tc.status)
				}
				tc.rep.ProcessId = tc.pid
				status, body := e.report(t, tc.rep, true)
				if status != http.StatusOK || body["EventCode"] != tc.want {
					t.Errorf("%s: %d %v, want event %q", tc.name, status, body, tc.want)
				}
			}
			if got := e.eventCodes(t, "p-live"); len(got) != 1 {
				t.Errorf("events of p-live: %v", got)
			}
		})
	}
}

// TestAgentReportRefusals: unsigned, malformed and unknown-fleet reports
// are refused with GameLift's exception names and change nothing.
func TestAgentReportRefusals(t *testing.T) {
	e := newReportEnv(t, nil)
	for _, tc := range []struct {
		name   string
		body   string
		sign   bool
		status int
		typ    string
	}{
		{"unsigned", `{"FleetId":"` + e.fleet + `","ComputeName":"host","Kind":"INVALID_PATH"}`, false, http.StatusForbidden, "MissingAuthenticationTokenException"},
		{"not JSON", `{"FleetId":`, true, http.StatusBadRequest, "InvalidRequestException"},
		{"unknown member", `{"FleetId":"` + e.fleet + `","ComputeName":"host","Kind":"EXITED","Extra":1}`, true, http.StatusBadRequest, "InvalidRequestException"},
		{"bad kind", `{"FleetId":"` + e.fleet + `","ComputeName":"host","Kind":"LAUNCHED"}`, true, http.StatusBadRequest, "InvalidRequestException"},
		{"unknown fleet", `{"FleetId":"fleet-00000000-0000-4000-8000-000000000000","ComputeName":"host","Kind":"INVALID_PATH"}`, true, http.StatusBadRequest, "NotFoundException"},
		{"unknown compute", `{"FleetId":"` + e.fleet + `","ComputeName":"other","Kind":"INVALID_PATH"}`, true, http.StatusBadRequest, "NotFoundException"},
	} {
		status, body := e.post(t, []byte(tc.body), tc.sign)
		if status != tc.status || body["__type"] != tc.typ {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, body, tc.status, tc.typ)
		}
	}
	if got := e.eventCodes(t, e.fleet); len(got) != 2 { // FLEET_CREATED, FLEET_STATE_ACTIVE
		t.Errorf("refused reports wrote events: %v", got)
	}
}

// TestAgentReportAnswersWhatTheProcessDid: the answer to an EXITED report
// says whether the process called ProcessReady, hosted a game session and
// called ProcessEnding, from which the agent tells a clean end from a
// crash; a READY_TIMEOUT report writes GameLift's timeout events.
func TestAgentReportAnswersWhatTheProcessDid(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newReportEnv(t, opts)
			now := time.Now()
			put := func(pid, status string, ready bool, session string, abnormal bool) {
				p := &game.Process{FleetID: e.fleet, ComputeName: "host", PID: pid, Location: "custom-rep", Status: status,
					Connected: status != game.ProcessTerminated, CreationTime: now, LastHealthy: now, Healthy: true,
					GameSessionID: session, Abnormal: abnormal}
				if ready {
					p.ActivationTime = now
				}
				if status == game.ProcessTerminated {
					p.TerminationTime = now
				}
				if err := e.Server.Store().Update(context.Background(), func(tx store.Tx) error { return tx.PutProcess(p) }); err != nil {
					t.Fatal(err)
				}
			}
			put("p-ended", game.ProcessTerminated, true, "", false)
			put("p-hosting", game.ProcessActive, true, "gsess-1", false)
			put("p-idle", game.ProcessActive, true, "", false)
			put("p-sick", game.ProcessTerminated, true, "", true)
			put("p-connected", game.ProcessConnected, false, "", false)
			put("p-active", game.ProcessActive, true, "", false)
			for _, tc := range []struct {
				pid, kind string
				want      map[string]any
			}{
				{"p-ended", "EXITED", map[string]any{"ProcessReady": true, "ProcessEnding": true}},
				{"p-hosting", "EXITED", map[string]any{"EventCode": "SERVER_PROCESS_CRASHED", "ProcessReady": true, "HostedGameSession": true}},
				{"p-idle", "EXITED", map[string]any{"EventCode": "SERVER_PROCESS_CRASHED", "ProcessReady": true}},
				{"p-sick", "EXITED", map[string]any{"ProcessReady": true}}, // ended unhealthy by the service, not by ProcessEnding
				{"p-never", "EXITED", map[string]any{"EventCode": "SERVER_PROCESS_CRASHED"}},
				{"p-silent", "READY_TIMEOUT", map[string]any{"EventCode": "SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT"}},
				{"p-connected", "READY_TIMEOUT", map[string]any{"EventCode": "SERVER_PROCESS_PROCESS_READY_TIMEOUT"}},
				{"p-active", "READY_TIMEOUT", map[string]any{"EventCode": "", "ProcessReady": true}},
			} {
				status, body := e.report(t, api.AgentReport{Kind: tc.kind, ProcessId: tc.pid}, true)
				if _, ok := tc.want["EventCode"]; !ok {
					tc.want["EventCode"] = ""
				}
				if status != http.StatusOK || fmt.Sprint(body) != fmt.Sprint(tc.want) {
					t.Errorf("%s %s: %d %v, want %v", tc.kind, tc.pid, status, body, tc.want)
				}
			}
			var p *game.Process
			e.Server.Store().View(context.Background(), func(tx store.Tx) (err error) {
				p, err = tx.GetProcess(e.fleet, "host", "p-connected")
				return err
			})
			if p == nil || p.Status != game.ProcessTerminated {
				t.Errorf("a process not ready in time is not ended: %+v", p)
			}
			status, body := e.report(t, api.AgentReport{Kind: "READY_TIMEOUT"}, true)
			if status != http.StatusBadRequest || body["__type"] != "InvalidRequestException" {
				t.Errorf("READY_TIMEOUT without ProcessId: %d %v", status, body)
			}
		})
	}
}
