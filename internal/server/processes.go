package server

import (
	"context"
	"log/slog"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
)

// endpoint connects the process endpoint (sdkserver) and the server
// processes (internal/processes): it authenticates handshakes, carries
// process requests to the processes, and carries their pushes to
// connected processes.
type endpoint struct {
	svc *control.Service
	ps  *processes.Service
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
	_ sdkserver.Authenticator    = (*endpoint)(nil)
	_ sdkserver.Backend          = (*endpoint)(nil)
	_ processes.Pusher           = (*endpoint)(nil)
	_ processes.ConnectionHolder = (*endpoint)(nil)
	_ control.Connections        = (*endpoint)(nil)
)

func ref(p sdkserver.Process) processes.Ref {
	return processes.Ref{FleetID: game.ResourceID(p.FleetID, "fleet"), ComputeName: game.ResourceID(p.ComputeID, "compute"), PID: p.PID}
}

func toProcess(r processes.Ref) sdkserver.Process {
	return sdkserver.Process{FleetID: r.FleetID, ComputeID: r.ComputeName, PID: r.PID}
}

// Authenticate admits a process whose compute auth token is valid for its
// fleet and compute, unless an injected fault refuses it, and records the
// connection.
func (b *endpoint) Authenticate(ctx context.Context, h *sdkserver.Handshake) error {
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
	return b.ps.ProcessConnected(ctx, ref(h.Process), processes.Connection{SDKVersion: h.SDKVersion, SDKLanguage: h.SDKLanguage,
		Endpoint: h.Endpoint, TokenExpires: expires})
}

// ProcessConnected sends again what the process may have missed while it
// was away (control.ProcessResumed).
func (b *endpoint) ProcessConnected(ctx context.Context, h *sdkserver.Handshake) {
	if err := b.ps.ProcessResumed(ctx, ref(h.Process)); err != nil {
		b.log.Warn("resuming a process", "process", h.PID, "err", err)
	}
}

func (b *endpoint) ProcessDisconnected(ctx context.Context, p sdkserver.Process) {
	b.ps.ProcessDisconnected(ctx, ref(p))
}

func (b *endpoint) ActivateServerProcess(ctx context.Context, p sdkserver.Process, r *sdkwire.ActivateServerProcess) error {
	return b.ps.ProcessReady(ctx, ref(p), r)
}

func (b *endpoint) HeartbeatServerProcess(ctx context.Context, p sdkserver.Process, r *sdkwire.HeartbeatServerProcess) error {
	return b.ps.ProcessHeartbeat(ctx, ref(p), r.HealthStatus)
}

func (b *endpoint) ActivateGameSession(ctx context.Context, p sdkserver.Process, r *sdkwire.ActivateGameSession) error {
	return b.ps.ProcessActivateGameSession(ctx, ref(p), r.GameSessionId)
}

func (b *endpoint) UpdatePlayerSessionCreationPolicy(ctx context.Context, p sdkserver.Process, r *sdkwire.UpdatePlayerSessionCreationPolicy) error {
	return b.ps.ProcessUpdateCreationPolicy(ctx, ref(p), r.GameSessionId, r.PlayerSessionPolicy)
}

func (b *endpoint) AcceptPlayerSession(ctx context.Context, p sdkserver.Process, r *sdkwire.AcceptPlayerSession) error {
	return b.ps.ProcessAcceptPlayer(ctx, ref(p), r.GameSessionId, r.PlayerSessionId)
}

func (b *endpoint) RemovePlayerSession(ctx context.Context, p sdkserver.Process, r *sdkwire.RemovePlayerSession) error {
	return b.ps.ProcessRemovePlayer(ctx, ref(p), r.GameSessionId, r.PlayerSessionId)
}

func (b *endpoint) DescribePlayerSessions(ctx context.Context, p sdkserver.Process, r *sdkwire.DescribePlayerSessions) (*sdkwire.DescribePlayerSessionsResult, error) {
	return b.ps.ProcessDescribePlayerSessions(ctx, ref(p), r)
}

func (b *endpoint) StartMatchBackfill(ctx context.Context, p sdkserver.Process, r *sdkwire.StartMatchBackfill) (*sdkwire.StartMatchBackfillResult, error) {
	return b.fm.ProcessStartMatchBackfill(ctx, flexmatch.Process(ref(p)), r)
}

func (b *endpoint) StopMatchBackfill(ctx context.Context, p sdkserver.Process, r *sdkwire.StopMatchBackfill) error {
	return b.fm.ProcessStopMatchBackfill(ctx, flexmatch.Process(ref(p)), r)
}

func (b *endpoint) GetComputeCertificate(ctx context.Context, p sdkserver.Process) (*sdkwire.GetComputeCertificateResult, error) {
	return b.ps.ComputeCertificate(ctx, ref(p))
}

// GetFleetRoleCredentials answers with empty credentials: an Anywhere
// fleet has no instance role, and an empty AccessKeyId tells the SDKs so.
func (b *endpoint) GetFleetRoleCredentials(ctx context.Context, p sdkserver.Process, r *sdkwire.GetFleetRoleCredentials) (*sdkwire.GetFleetRoleCredentialsResult, error) {
	return &sdkwire.GetFleetRoleCredentialsResult{}, nil
}

func (b *endpoint) TerminateServerProcess(ctx context.Context, p sdkserver.Process) error {
	return b.ps.ProcessEnding(ctx, ref(p))
}

// Push implements processes.Pusher: to the process's connection on this
// node, else through the node that holds it.
func (b *endpoint) Push(r processes.Ref, msg sdkwire.Push) bool {
	if b.hub.Push(toProcess(r), msg) {
		return true
	}
	return b.forward(r, func(ctx context.Context, base string) (bool, error) { return b.fwd.Push(ctx, base, r, msg) })
}

// Drop cuts the process's connections on this node without a close
// frame (an injected fault); the SDKs reconnect.
func (b *endpoint) Drop(r processes.Ref) bool { return b.hub.Drop(toProcess(r)) }

// Holds implements processes.ConnectionHolder.
func (b *endpoint) Holds(r processes.Ref) bool { return b.hub.Connected(toProcess(r)) }

// Disconnect implements processes.Pusher: the process is gone for good.
func (b *endpoint) Disconnect(r processes.Ref, reason string) {
	if b.DisconnectLocal(r, reason) {
		return
	}
	b.forward(r, func(ctx context.Context, base string) (bool, error) { return b.fwd.Disconnect(ctx, base, r, reason) })
}
