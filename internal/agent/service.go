package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
)

// callTimeout bounds one call to the service.
const callTimeout = 20 * time.Second

// registerUntilDone registers the compute, retrying with backoff while
// the service cannot be reached. A refusal (unknown fleet, a name taken
// with other details...) is returned: retrying would not change it.
func (a *Agent) registerUntilDone(ctx context.Context) error {
	for {
		err := a.register(ctx)
		if err == nil {
			return nil
		}
		if !retryable(err) {
			return fmt.Errorf("registering compute %s to fleet %s: %s", a.cfg.ComputeName, a.cfg.FleetID, errText(err))
		}
		d := a.svcBackoff.next()
		retry := a.cfg.Wake(a.cfg.Now().Add(d)) // before the event: whoever hears it may move the clock
		a.log.Warn("cannot reach the service to register the compute; retrying", "endpoint", a.cfg.Endpoint, "retry_in", d.String(), "err", errText(err))
		a.emit(Event{Kind: EvServiceError, Detail: "RegisterCompute: " + errText(err), Delay: d})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-retry:
		}
	}
}

// register calls RegisterCompute (idempotent for the same details) and
// keeps the SDK endpoint it answers.
func (a *Agent) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	in := &gamelift.RegisterComputeInput{
		FleetId: aws.String(a.cfg.FleetID), ComputeName: aws.String(a.cfg.ComputeName),
		Location: aws.String(a.cfg.Location), IpAddress: aws.String(a.cfg.IPAddress),
	}
	if a.cfg.DNSName != "" {
		in.DnsName = aws.String(a.cfg.DNSName)
	}
	out, err := a.gl.RegisterCompute(ctx, in)
	if err != nil {
		return err
	}
	a.sdkEndpoint = aws.ToString(out.Compute.GameLiftServiceSdkEndpoint)
	a.shareCreds()
	a.svcBackoff.reset()
	a.log.Info("compute registered", "sdk_endpoint", a.sdkEndpoint, "location", a.cfg.Location, "ip", a.cfg.IPAddress)
	a.emit(Event{Kind: EvRegistered, Detail: a.sdkEndpoint})
	return nil
}

// retryable reports whether a failed call may succeed later: the service
// was not reached, failed (5xx), throttled, or is not ready yet
// (NotReadyException: GameLift asks for retries with backoff).
func retryable(err error) bool {
	var ae interface{ ErrorCode() string }
	if !asAPI(err, &ae) {
		return true
	}
	var hs interface{ HTTPStatusCode() int }
	if errors.As(err, &hs) && hs.HTTPStatusCode() >= 500 {
		return true
	}
	switch ae.ErrorCode() {
	case "NotReadyException", "ThrottlingException", "InternalServiceException":
		return true
	}
	return false
}

// refreshToken gets a new compute auth token; the next one is fetched
// when half of this one's lifetime has passed, long before it expires.
// Processes already running keep theirs: the service refreshes their
// connections itself (RefreshConnection).
func (a *Agent) refreshToken(ctx context.Context, now time.Time) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := a.gl.GetComputeAuthToken(cctx, &gamelift.GetComputeAuthTokenInput{
		FleetId: aws.String(a.cfg.FleetID), ComputeName: aws.String(a.cfg.ComputeName),
	})
	if err != nil {
		if isNotFound(err) {
			a.nextPoll = now // find out whether the fleet or the compute went
		}
		a.serviceFailed(now, "GetComputeAuthToken", err)
		return
	}
	a.svcBackoff.reset()
	a.token = aws.ToString(out.AuthToken)
	a.tokenExpiry = aws.ToTime(out.ExpirationTimestamp)
	a.shareCreds()
	life := a.tokenExpiry.Sub(now)
	if life < 2*time.Second {
		life = 2 * time.Second
	}
	a.refreshAt = now.Add(life / 2)
	a.log.Info("auth token obtained", "expires", a.tokenExpiry.UTC().Format(time.RFC3339), "next_refresh", a.refreshAt.UTC().Format(time.RFC3339))
	a.emit(Event{Kind: EvToken, Detail: a.tokenExpiry.UTC().Format(time.RFC3339)})
}

// poll reads the runtime configuration and checks the compute is still
// registered. A deleted fleet is fatal; a deregistered compute is
// registered again.
func (a *Agent) poll(ctx context.Context, now time.Time) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	rc, err := a.gl.DescribeRuntimeConfiguration(cctx, &gamelift.DescribeRuntimeConfigurationInput{FleetId: aws.String(a.cfg.FleetID)})
	if isNotFound(err) {
		a.log.Error("the fleet was deleted; stopping every server process", "err", errText(err))
		a.fatal = fmt.Errorf("fleet %s: %w", a.cfg.FleetID, ErrFleetGone)
		return
	}
	if err != nil {
		a.serviceFailed(now, "DescribeRuntimeConfiguration", err)
		return
	}
	_, err = a.gl.DescribeCompute(cctx, &gamelift.DescribeComputeInput{
		FleetId: aws.String(a.cfg.FleetID), ComputeName: aws.String(a.cfg.ComputeName),
	})
	if isNotFound(err) {
		a.log.Warn("the compute was deregistered behind the agent's back; registering it again")
		if err = a.register(cctx); err == nil {
			a.token, a.refreshAt = "", time.Time{} // the old tokens went with it
		}
	}
	if err != nil {
		a.serviceFailed(now, "DescribeCompute", err)
		return
	}
	a.svcBackoff.reset()
	a.nextPoll = now.Add(a.cfg.PollInterval)
	a.apply(ctx, now, rc.RuntimeConfiguration)
}

// shutdown stops every process, reports their exits and deregisters the
// compute. It runs after ctx may have ended, on a short context of its own.
func (a *Agent) shutdown(ctx context.Context) {
	a.stopAll()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	a.reports.retryAt = time.Time{}
	a.reports.flush(sctx, a, a.cfg.Now())
	if a.cfg.KeepRegistered || a.fatal != nil {
		return
	}
	_, err := a.gl.DeregisterCompute(sctx, &gamelift.DeregisterComputeInput{
		FleetId: aws.String(a.cfg.FleetID), ComputeName: aws.String(a.cfg.ComputeName),
	})
	if err != nil {
		a.log.Warn("could not deregister the compute", "err", errText(err))
		return
	}
	a.log.Info("compute deregistered")
	a.emit(Event{Kind: EvDeregistered})
}
