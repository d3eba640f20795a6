package agent

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
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anylift/anylift/internal/api"
)

// maxQueuedReports bounds the reports kept while the service is away;
// the oldest are dropped (and logged) beyond it.
const maxQueuedReports = 1000

// reportQueue holds the reports not yet accepted by the service, oldest
// first; they are sent in order and retried with backoff.
type reportQueue struct {
	pending []api.AgentReport
	retryAt time.Time
	backoff backoff
}

// add queues r; it returns the oldest report, dropped to make room, if
// any.
func (q *reportQueue) add(r api.AgentReport) (dropped *api.AgentReport) {
	if len(q.pending) >= maxQueuedReports {
		dropped = &q.pending[0]
		q.pending = q.pending[1:]
	}
	q.pending = append(q.pending, r)
	return dropped
}

// flush sends what is pending, in order, until one fails to reach the
// service: that one is retried after a backoff. A report the service
// refuses (its fleet or compute is gone) is dropped.
func (q *reportQueue) flush(ctx context.Context, a *Agent, now time.Time) {
	if q.backoff.min == 0 {
		q.backoff = backoff{min: a.cfg.BackoffMin, max: a.cfg.BackoffMax}
	}
	if now.Before(q.retryAt) {
		a.unanswered() // exits seen since the last failed attempt
		return
	}
	q.retryAt = time.Time{}
	for len(q.pending) > 0 {
		r := q.pending[0]
		r.FleetId, r.ComputeName = a.cfg.FleetID, a.cfg.ComputeName
		res, status, err := a.send(ctx, r)
		if err != nil && status == 0 || status >= 500 {
			d := q.backoff.next()
			q.retryAt = now.Add(d)
			if err == nil {
				err = fmt.Errorf("HTTP status %d", status)
			}
			a.log.Warn("cannot report to the service; retrying", "retry_in", d.String(), "queued", len(q.pending), "err", err)
			a.emit(Event{Kind: EvServiceError, Detail: "report: " + err.Error(), Delay: d})
			a.unanswered()
			return
		}
		q.backoff.reset()
		q.pending = q.pending[1:]
		if err != nil {
			a.log.Warn("the service refused a process report", "kind", r.Kind, "pid", r.ProcessId, "err", err)
			a.settle(r.ProcessId, nil, now)
			continue
		}
		a.emit(Event{Kind: EvReported, PID: r.ProcessId, Detail: res.EventCode})
		if r.Kind == reportReadyTimeout {
			a.readyAnswer(r.ProcessId, res, now)
		} else {
			a.settle(r.ProcessId, res, now)
		}
	}
}

// send posts one report, signed with SigV4, and returns the answer, the
// HTTP status (0 when the service was not reached) and an error.
func (a *Agent) send(ctx context.Context, r api.AgentReport) (*api.AgentReportResult, int, error) {
	body, _ := json.Marshal(r)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(a.cfg.Endpoint, "/")+api.AgentReportPath, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	creds, err := a.creds.Retrieve(ctx)
	if err != nil {
		return nil, 0, err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "gamelift", a.cfg.Region, time.Now()); err != nil {
		return nil, 0, err
	}
	resp, err := a.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		json.Unmarshal(b, &e)
		return nil, resp.StatusCode, fmt.Errorf("%s: %s", e.Type, e.Message)
	}
	var out api.AgentReportResult
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("reading the answer: %w", err)
	}
	return &out, resp.StatusCode, nil
}
