package server

import (
	"context"
	"log/slog"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
)

// processes connects the process endpoint (sdkserver) and the application
// (control): it authenticates handshakes, carries process requests to
// control, and carries control's pushes to connected processes.
type processes struct {
	svc *control.Service
	cp  *computes.Service
	qs  *queueing.Service
	fm  *flexmatch.Service
	hub *sdkserver.Server
	fwd *cluster.Client // nil without a node secret: nothing is forwarded
	log *slog.Logger
	// hint, when set, is logged as a warning with each refused handshake.
	hint string
}

var (
	_ sdkserver.Authenticator  = (*processes)(nil)
	_ sdkserver.Backend        = (*processes)(nil)
	_ control.Pusher           = (*processes)(nil)
	_ control.ConnectionHolder = (*processes)(nil)
)

func ref(p sdkserver.Process) control.ProcessRef {
	return control.ProcessRef{FleetID: game.ResourceID(p.FleetID, "fleet"), ComputeName: game.ResourceID(p.ComputeID, "compute"), PID: p.PID}
}

func toProcess(r control.ProcessRef) sdkserver.Process {
	return sdkserver.Process{FleetID: r.FleetID, ComputeID: r.ComputeName, PID: r.PID}
}

// Authenticate admits a process whose compute auth token is valid for its
// fleet and compute, unless an injected fault refuses it, and records the
// connection.
func (b *processes) Authenticate(ctx context.Context, h *sdkserver.Handshake) error {
	if h.PID == "" {
		return game.Errorf(game.Unauthorized, "pID is required")
	}
	expires, err := b.cp.AuthTokenExpiry(ctx, h.AuthToken, h.FleetID, h.ComputeID)
	if err != nil {
		if b.hint != "" && game.IsKind(err, game.Unauthorized) {
			b.log.Warn("a game server was refused: "+err.Error(), "process", h.PID, "fleet", h.FleetID, "compute", h.ComputeID,
				"fix", b.hint)
		}
		return err
	}
	if err := b.svc.FaultRefusesConnection(ref(h.Process)); err != nil {
		return err
	}
	return b.svc.ProcessConnected(ctx, ref(h.Process), control.Connection{SDKVersion: h.SDKVersion, SDKLanguage: h.SDKLanguage,
		Endpoint: h.Endpoint, TokenExpires: expires})
}

// ProcessConnected sends again what the process may have missed while it
// was away (control.ProcessResumed).
func (b *processes) ProcessConnected(ctx context.Context, h *sdkserver.Handshake) {
	if err := b.svc.ProcessResumed(ctx, ref(h.Process)); err != nil {
		b.log.Warn("resuming a process", "process", h.PID, "err", err)
	}
}

func (b *processes) ProcessDisconnected(ctx context.Context, p sdkserver.Process) {
	b.svc.ProcessDisconnected(ctx, ref(p))
}

func (b *processes) ActivateServerProcess(ctx context.Context, p sdkserver.Process, r *sdkwire.ActivateServerProcess) error {
	return b.svc.ProcessReady(ctx, ref(p), r)
}

func (b *processes) HeartbeatServerProcess(ctx context.Context, p sdkserver.Process, r *sdkwire.HeartbeatServerProcess) error {
	return b.svc.ProcessHeartbeat(ctx, ref(p), r.HealthStatus)
}

func (b *processes) ActivateGameSession(ctx context.Context, p sdkserver.Process, r *sdkwire.ActivateGameSession) error {
	return b.svc.ProcessActivateGameSession(ctx, ref(p), r.GameSessionId)
}

func (b *processes) UpdatePlayerSessionCreationPolicy(ctx context.Context, p sdkserver.Process, r *sdkwire.UpdatePlayerSessionCreationPolicy) error {
	return b.svc.ProcessUpdateCreationPolicy(ctx, ref(p), r.GameSessionId, r.PlayerSessionPolicy)
}

func (b *processes) AcceptPlayerSession(ctx context.Context, p sdkserver.Process, r *sdkwire.AcceptPlayerSession) error {
	return b.svc.ProcessAcceptPlayer(ctx, ref(p), r.GameSessionId, r.PlayerSessionId)
}

func (b *processes) RemovePlayerSession(ctx context.Context, p sdkserver.Process, r *sdkwire.RemovePlayerSession) error {
	return b.svc.ProcessRemovePlayer(ctx, ref(p), r.GameSessionId, r.PlayerSessionId)
}

func (b *processes) DescribePlayerSessions(ctx context.Context, p sdkserver.Process, r *sdkwire.DescribePlayerSessions) (*sdkwire.DescribePlayerSessionsResult, error) {
	return b.svc.ProcessDescribePlayerSessions(ctx, ref(p), r)
}

func (b *processes) StartMatchBackfill(ctx context.Context, p sdkserver.Process, r *sdkwire.StartMatchBackfill) (*sdkwire.StartMatchBackfillResult, error) {
	return b.fm.ProcessStartMatchBackfill(ctx, flexmatch.Process(ref(p)), r)
}

func (b *processes) StopMatchBackfill(ctx context.Context, p sdkserver.Process, r *sdkwire.StopMatchBackfill) error {
	return b.fm.ProcessStopMatchBackfill(ctx, flexmatch.Process(ref(p)), r)
}

func (b *processes) GetComputeCertificate(ctx context.Context, p sdkserver.Process) (*sdkwire.GetComputeCertificateResult, error) {
	return b.svc.ComputeCertificate(ctx, ref(p))
}

// GetFleetRoleCredentials answers with empty credentials: an Anywhere
// fleet has no instance role, and an empty AccessKeyId tells the SDKs so.
func (b *processes) GetFleetRoleCredentials(ctx context.Context, p sdkserver.Process, r *sdkwire.GetFleetRoleCredentials) (*sdkwire.GetFleetRoleCredentialsResult, error) {
	return &sdkwire.GetFleetRoleCredentialsResult{}, nil
}

func (b *processes) TerminateServerProcess(ctx context.Context, p sdkserver.Process) error {
	return b.svc.ProcessEnding(ctx, ref(p))
}

// Push implements control.Pusher: to the process's connection on this
// node, else through the node that holds it.
func (b *processes) Push(r control.ProcessRef, msg sdkwire.Push) bool {
	if b.hub.Push(toProcess(r), msg) {
		return true
	}
	return b.forward(r, func(ctx context.Context, base string) (bool, error) { return b.fwd.Push(ctx, base, r, msg) })
}

// Drop cuts the process's connections on this node without a close
// frame (an injected fault); the SDKs reconnect.
func (b *processes) Drop(r control.ProcessRef) bool { return b.hub.Drop(toProcess(r)) }

// Holds implements control.ConnectionHolder.
func (b *processes) Holds(r control.ProcessRef) bool { return b.hub.Connected(toProcess(r)) }

// Disconnect implements control.Pusher: the process is gone for good.
func (b *processes) Disconnect(r control.ProcessRef, reason string) {
	if b.DisconnectLocal(r, reason) {
		return
	}
	b.forward(r, func(ctx context.Context, base string) (bool, error) { return b.fwd.Disconnect(ctx, base, r, reason) })
}
