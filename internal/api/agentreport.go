package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/wire"
)

// AgentReportPath is Anylift's own endpoint where an agent reports what
// happened to the server processes it launched. GameLift has no API for
// it, so it lives under Anylift's name, apart from GameLift's routes: a
// POST of a JSON AgentReport, signed with SigV4 like any API request. It
// answers 200 with {"EventCode": "..."} (empty when no event was written),
// or a JSON error {"__type", "message"} with GameLift's status codes:
// NotFoundException when the fleet or compute no longer exists.
const AgentReportPath = "/anylift/agent/v1/process-report"

// AgentReport is the body of a report (see processes.ProcessReport).
type AgentReport struct {
	FleetId     string
	ComputeName string
	ProcessId   string `json:",omitempty"`
	Kind        string // INVALID_PATH, EXITED or READY_TIMEOUT
	LaunchPath  string `json:",omitempty"`
	ExitCode    int
	Signal      string `json:",omitempty"`
	Stopped     string `json:",omitempty"` // "", TERMINATED or KILLED
}

// AgentReportResult is the answer to a report: the event written, and
// for an EXITED report what the process did before it exited (it called
// ProcessReady, a game session was placed on it, it called ProcessEnding).
// The agent replaces a process that hosted a game session, or was ready
// and called ProcessEnding, at once, and backs off any other.
type AgentReportResult struct {
	EventCode         string
	ProcessReady      bool `json:",omitempty"`
	HostedGameSession bool `json:",omitempty"`
	ProcessEnding     bool `json:",omitempty"`
}

// DecodeAgentReport parses a report body strictly: unknown members and
// trailing data are refused.
func DecodeAgentReport(body []byte) (*AgentReport, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var r AgentReport
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("report is not a valid JSON object: %v", err)
	}
	if dec.More() {
		return nil, errors.New("report has data after its JSON object")
	}
	return &r, nil
}

// ServeAgentReport serves AgentReportPath with h's verifier.
func (h *Handler) ServeAgentReport(w http.ResponseWriter, r *http.Request) {
	reqID := h.newID()
	fail := func(ex exception, msg string) { h.writeError(w, wire.JSON, reqID, ex, msg) }
	signed, body, err := h.readBody(w, r, 64<<10)
	if err != nil {
		w.Header().Set("Connection", "close") // the body is not drained
		var ae *authError
		if errors.As(err, &ae) {
			fail(exception{ae.code, ae.status}, ae.message)
		} else {
			fail(exceptions[game.InvalidRequest], "could not read the report: "+err.Error())
		}
		return
	}
	if ae := h.admit(r, signed); ae != nil {
		fail(exception{ae.code, ae.status}, ae.message)
		return
	}
	rep, err := DecodeAgentReport(body)
	if err != nil {
		fail(exceptions[game.InvalidRequest], err.Error())
		return
	}
	// A report is what an agent does for the compute it registered: a
	// key limited by a policy needs RegisterCompute on the fleet.
	fleet := &wire.RegisterComputeInput{FleetId: &rep.FleetId}
	if ae := h.authorize(signed, "RegisterCompute", fleet); ae != nil {
		fail(exception{ae.code, ae.status}, ae.message)
		return
	}
	// The report writes the process's record: the fleet's owner makes it.
	if rt := h.routerFor(r); rt != nil {
		if err := h.owner(r.Context(), rt, fleet); err != nil {
			h.elsewhere(w, r, wire.JSON, "AgentReport", reqID, body, err)
			return
		}
	}
	res, err := h.ps.ReportProcess(r.Context(), processes.ProcessReport{
		FleetID: rep.FleetId, ComputeName: rep.ComputeName, PID: rep.ProcessId, Kind: rep.Kind,
		LaunchPath: rep.LaunchPath, ExitCode: rep.ExitCode, Signal: rep.Signal, Stopped: rep.Stopped,
	})
	if _, ok := h.elsewhere(w, r, wire.JSON, "AgentReport", reqID, body, err); ok {
		return
	}
	if err != nil {
		ex := exceptionFor(err)
		msg := err.Error()
		if ex.code == "InternalServiceException" {
			h.log.Error("agent report failed", "request_id", reqID, "err", err)
			msg = "An internal error occurred. Request ID: " + reqID
		}
		fail(ex, msg)
		return
	}
	out, _ := json.Marshal(AgentReportResult{EventCode: res.EventCode, ProcessReady: res.ProcessReady,
		HostedGameSession: res.HostedGameSession, ProcessEnding: res.ProcessEnding})
	h.writeHeaders(w, wire.JSON, reqID)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}
