package processes

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
)

// Ref names a server process: its pID on a compute of a fleet. It is the
// store's key of a process, so that control, which does not import this
// package, names a process the same way (its fault hooks).
type Ref = store.ProcessKey

// Pusher delivers service messages to connected server processes (the
// process endpoint). Push reports false when the process is not connected.
type Pusher interface {
	Push(p Ref, msg sdkwire.Push) bool
	Disconnect(p Ref, reason string)
}

// SetPusher connects the service to the process endpoint. Call it before
// Run and before serving requests.
func (s *Service) SetPusher(p Pusher) { s.pusher = p }

// push sends msg to p when an endpoint is connected; the outcome is the
// endpoint's to report (a process not connected misses it, as it would a
// message lost on a dropped socket).
func (s *Service) push(p Ref, msg sdkwire.Push) bool {
	if s.pusher == nil {
		return false
	}
	return s.pusher.Push(p, msg)
}

func refOf(p *game.Process) Ref {
	return Ref{FleetID: p.FleetID, ComputeName: p.ComputeName, PID: p.PID}
}

// Connection describes a server process's new connection.
type Connection struct {
	SDKVersion, SDKLanguage string // empty: keep what an earlier connection said
	// Endpoint is the ws:// or wss:// URL the connection reached (empty
	// when unknown).
	Endpoint     string
	TokenExpires time.Time // when the connection's auth token expires
}

// ProcessConnected records a connection of a server process (a new one, a
// reconnect or a refreshed connection). The compute must be registered.
func (s *Service) ProcessConnected(ctx context.Context, ref Ref, c Connection) error {
	now := s.clock()
	err := s.update(ctx, func(tx store.Tx) error {
		compute, err := tx.GetCompute(ref.FleetID, ref.ComputeName)
		if err != nil {
			return err
		}
		p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		if game.IsKind(err, game.NotFound) && compute.Leaving() {
			// A container restarted in a group being removed or
			// recycled: nothing is to be placed on it.
			return game.Errorf(game.InvalidRequest, "compute %s is being removed and takes no new server process", ref.ComputeName)
		}
		if game.IsKind(err, game.NotFound) {
			p = &game.Process{FleetID: ref.FleetID, ComputeName: ref.ComputeName, PID: ref.PID, Location: compute.Location,
				Status: game.ProcessConnected, Healthy: true, CreationTime: now, LastHealthy: now}
		} else if err != nil {
			return err
		}
		if p.Status == game.ProcessTerminated {
			return game.Errorf(game.InvalidRequest, "server process %s has ended", ref.PID)
		}
		p.Connected, p.DisconnectedAt, p.TokenExpires, p.Endpoint = true, time.Time{}, c.TokenExpires, c.Endpoint
		if c.SDKVersion != "" {
			p.SDKVersion, p.SDKLanguage = c.SDKVersion, c.SDKLanguage
		}
		if err := tx.HoldProcess(ref, s.cfg.NodeID); err != nil {
			return err
		}
		return tx.PutProcess(p)
	})
	if err == nil && !c.TokenExpires.IsZero() {
		// The token may have been minted long before: the timer refreshes
		// it RefreshMargin before it expires, sooner than staleWindow.
		s.dueBy(c.TokenExpires.Add(-s.cfg.RefreshMargin))
	}
	return err
}

// ProcessReady is ActivateServerProcess: the process is ACTIVE on port,
// healthy, and eligible for placement at once, as GameLift documents.
// The SDKs mark themselves ready only after this answer reaches them and
// drop a CreateGameSession that comes earlier; they start their health
// reports once ready. So a game session
// placed before the first heartbeat is pushed when that heartbeat comes
// (AwaitingHeartbeat). A second ProcessReady updates port and log paths
// and keeps the health record.
func (s *Service) ProcessReady(ctx context.Context, ref Ref, r *sdkwire.ActivateServerProcess) error {
	now := s.clock()
	first := false
	err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
		if first = p.Status != game.ProcessActive; first {
			p.Healthy, p.LastHealthy, p.AwaitingHeartbeat = true, now, true
		}
		if p.ActivationTime.IsZero() {
			p.ActivationTime = now
		}
		p.Status, p.Port, p.LogPaths = game.ProcessActive, r.Port, r.LogPaths
		p.SDKVersion, p.SDKLanguage = r.SdkVersion, r.SdkLanguage
		return nil
	})
	if err == nil && first {
		s.wakePlacer() // a process can take a game session now
	}
	return err
}

// PushStart sends a game session's start to the process it was placed on,
// unless the process has not sent its first heartbeat since ProcessReady:
// ProcessHeartbeat pushes it then.
func (s *Service) PushStart(p *game.Process, gs *game.GameSession) {
	if !p.AwaitingHeartbeat {
		s.push(refOf(p), startMessage(gs))
	}
}

// ProcessHeartbeat records a health report. A healthy report restarts the
// unhealthy clock; an unhealthy one leaves it running and keeps the
// process from new game sessions. A process whose last healthy report (or
// activation) is UnhealthyTimeout old is ended as unhealthy, by this report
// when it is unhealthy, or else by the sweep (sweepProcess). The first
// report after ProcessReady says the SDK knows it is ready: a game session
// placed on the process before it is pushed now.
func (s *Service) ProcessHeartbeat(ctx context.Context, ref Ref, healthy bool) error {
	if s.healthReportLost(ref) {
		return nil // an injected fault (Faults.HealthReportLost)
	}
	now := s.clock()
	var sick *game.Process
	var start *game.GameSession
	freed := false
	err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
		freed = healthy && !p.Healthy && p.GameSessionID == ""
		if p.AwaitingHeartbeat && p.GameSessionID != "" {
			gs, err := tx.GetGameSession(p.GameSessionID)
			if err != nil && !game.IsKind(err, game.NotFound) {
				return err
			}
			if err == nil && gs.Status == game.SessionActivating {
				start = gs
			}
		}
		p.AwaitingHeartbeat = false
		p.Healthy = healthy
		if healthy {
			p.LastHealthy = now
			return nil
		}
		if p.Status == game.ProcessActive && s.unhealthyTooLong(p, now) {
			sick = p
			return s.terminateUnhealthy(tx, p, s.unhealthyReason())
		}
		return nil
	})
	if err == nil && start != nil && !s.startHeld(start.ID) {
		s.push(ref, startMessage(start))
	}
	if err == nil && sick != nil {
		s.sendTerminate(sick)
	}
	if err == nil && freed {
		s.wakePlacer() // a process can take a game session now
	}
	return err
}

// unhealthyTooLong reports whether p has gone UnhealthyTimeout without a
// healthy report at now.
func (s *Service) unhealthyTooLong(p *game.Process, now time.Time) bool {
	return !p.LastHealthy.After(now.Add(-s.cfg.UnhealthyTimeout))
}

// unhealthyReason is the end of the SERVER_PROCESS_TERMINATED_UNHEALTHY
// event's message.
func (s *Service) unhealthyReason() string {
	return "no healthy report for " + s.cfg.UnhealthyTimeout.String()
}

// updateProcess runs fn on a live process and stores it.
func (s *Service) updateProcess(ctx context.Context, ref Ref, fn func(store.Tx, *game.Process) error) error {
	return s.update(ctx, func(tx store.Tx) error {
		p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		if err != nil {
			return err
		}
		if p.Status == game.ProcessTerminated {
			return game.Errorf(game.InvalidRequest, "server process %s has ended", ref.PID)
		}
		if err := fn(tx, p); err != nil {
			return err
		}
		return tx.PutProcess(p)
	})
}

// ownSession returns the game session a process hosts, refusing any other
// id: a process can only touch its own game session.
func (s *Service) ownSession(tx store.Tx, ref Ref, gameSessionID string) (*game.Process, *game.GameSession, error) {
	p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
	if err != nil {
		return nil, nil, err
	}
	if p.GameSessionID == "" || p.GameSessionID != gameSessionID {
		return nil, nil, game.Errorf(game.Unauthorized, "game session %s is not hosted by this server process", gameSessionID)
	}
	gs, err := tx.GetGameSession(gameSessionID)
	return p, gs, err
}

// ProcessActivateGameSession is ActivateGameSession: the process's own
// ACTIVATING session becomes ACTIVE with its connection details.
func (s *Service) ProcessActivateGameSession(ctx context.Context, ref Ref, gameSessionID string) error {
	return s.update(ctx, func(tx store.Tx) error {
		p, gs, err := s.ownSession(tx, ref, gameSessionID)
		if err != nil {
			return err
		}
		switch gs.Status {
		case game.SessionActive:
			return nil // a repeated activation
		case game.SessionActivating:
		default:
			return game.Errorf(game.InvalidGameSessionStatus, "game session %s is %s and cannot be activated", gs.ID, gs.Status)
		}
		c, err := tx.GetCompute(ref.FleetID, ref.ComputeName)
		if err != nil {
			return err
		}
		gs.Status, gs.IPAddress, gs.DNSName, gs.Port = game.SessionActive, c.IPAddress, c.DNSName, c.ConnectionPort(p.Port)
		if err := tx.UpdateGameSession(gs); err != nil {
			return err
		}
		return s.placementActivated(tx, gs)
	})
}

// ProcessUpdateCreationPolicy is UpdatePlayerSessionCreationPolicy.
func (s *Service) ProcessUpdateCreationPolicy(ctx context.Context, ref Ref, gameSessionID, policy string) error {
	return s.update(ctx, func(tx store.Tx) error {
		_, gs, err := s.ownSession(tx, ref, gameSessionID)
		if err != nil {
			return err
		}
		if !gs.Live() {
			return game.Errorf(game.InvalidGameSessionStatus, "game session %s has ended", gs.ID)
		}
		gs.PlayerSessionCreationPolicy = policy
		return tx.UpdateGameSession(gs)
	})
}

// checkOwn refuses a game session the process does not host.
func (s *Service) checkOwn(ctx context.Context, ref Ref, gameSessionID string) error {
	if s.hosts != nil && s.hosts.Hosts(ref.FleetID, ref.ComputeName, ref.PID, gameSessionID) {
		return nil
	}
	return s.view(ctx, func(tx store.Tx) error {
		_, _, err := s.ownSession(tx, ref, gameSessionID)
		return err
	})
}

// ProcessAcceptPlayer is AcceptPlayerSession from the process.
func (s *Service) ProcessAcceptPlayer(ctx context.Context, ref Ref, gameSessionID, playerSessionID string) error {
	if err := s.checkOwn(ctx, ref, gameSessionID); err != nil {
		return err
	}
	_, err := s.AcceptPlayerSession(ctx, gameSessionID, playerSessionID)
	return err
}

// ProcessRemovePlayer is RemovePlayerSession from the process.
func (s *Service) ProcessRemovePlayer(ctx context.Context, ref Ref, gameSessionID, playerSessionID string) error {
	if err := s.checkOwn(ctx, ref, gameSessionID); err != nil {
		return err
	}
	_, err := s.RemovePlayerSession(ctx, gameSessionID, playerSessionID)
	return err
}

// ProcessDescribePlayerSessions is DescribePlayerSessions from the
// process, confined to its own game session.
func (s *Service) ProcessDescribePlayerSessions(ctx context.Context, ref Ref, r *sdkwire.DescribePlayerSessions) (*sdkwire.DescribePlayerSessionsResult, error) {
	out := &sdkwire.DescribePlayerSessionsResult{PlayerSessions: []sdkwire.PlayerSession{}}
	err := s.view(ctx, func(tx store.Tx) error {
		p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		if err != nil {
			return err
		}
		f := store.PlayerFilter{ID: r.PlayerSessionId, GameSessionID: r.GameSessionId, PlayerID: r.PlayerId}
		if err := store.CheckPlayerFilter(&f, r.PlayerSessionStatusFilter); err != nil {
			return err
		}
		if f.GameSessionID != "" && f.GameSessionID != p.GameSessionID {
			return game.Errorf(game.Unauthorized, "game session %s is not hosted by this server process", f.GameSessionID)
		}
		list, next, err := tx.ListPlayerSessions(f, store.Page{Limit: r.Limit, Token: r.NextToken})
		if err != nil {
			return err
		}
		for _, ps := range list {
			if ps.GameSessionID != p.GameSessionID || p.GameSessionID == "" {
				continue // another process's player
			}
			out.PlayerSessions = append(out.PlayerSessions, sdkPlayerSession(ps))
		}
		out.NextToken = next
		return nil
	})
	return out, err
}

func sdkPlayerSession(p *game.PlayerSession) sdkwire.PlayerSession {
	return sdkwire.PlayerSession{
		PlayerId: p.PlayerID, PlayerSessionId: p.ID, GameSessionId: p.GameSessionID, FleetId: p.FleetID,
		PlayerData: p.PlayerData, IpAddress: p.IPAddress, DnsName: p.DNSName, Port: p.Port,
		CreationTime: store.Millis(p.CreationTime), TerminationTime: store.Millis(p.TerminationTime), Status: p.Status,
	}
}

// ProcessEnding is TerminateServerProcess: the process is ending on its
// own; its game session ends with it. A process
// the service has already ended (unhealthy, then sent TerminateProcess)
// answers that push with ProcessEnding: that succeeds and changes nothing.
func (s *Service) ProcessEnding(ctx context.Context, ref Ref) error {
	return s.update(ctx, func(tx store.Tx) error {
		p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		if err != nil || p.Status == game.ProcessTerminated {
			return err
		}
		if err := s.endProcess(tx, p, game.SessionTerminated, "", "", ""); err != nil {
			return err
		}
		return tx.PutProcess(p)
	})
}

// endProcess marks p TERMINATED and ends its live game session with
// status and reason (ACTIVATING sessions end in ERROR); a non-empty event
// code is written as a fleet event.
func (s *Service) endProcess(tx store.Tx, p *game.Process, status, reason, code, message string) error {
	now := s.clock()
	p.Status, p.TerminationTime, p.Connected = game.ProcessTerminated, now, false
	p.Abnormal = code != ""
	if p.GameSessionID != "" {
		gs, err := tx.GetGameSession(p.GameSessionID)
		if err != nil && !game.IsKind(err, game.NotFound) {
			return err
		}
		if err == nil {
			st, rs := status, reason
			switch gs.Status {
			case game.SessionActivating:
				st, rs = game.SessionError, "" // never activated: ERROR
			case game.SessionTerminating:
				st, rs = game.SessionTerminated, "" // keeps TerminateGameSession's reason
			}
			if err := s.endSession(tx, gs, st, rs); err != nil {
				return err
			}
		}
	}
	if code != "" {
		return s.ctl.RecordEvent(tx, p.FleetID, p.PID, code, message)
	}
	return nil
}

// terminateUnhealthy ends a process judged unhealthy; the caller sends it
// TerminateProcess after the commit.
func (s *Service) terminateUnhealthy(tx store.Tx, p *game.Process, why string) error {
	return s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, "SERVER_PROCESS_TERMINATED_UNHEALTHY",
		"Server process "+p.PID+" on compute "+p.ComputeName+" was terminated: "+why+".")
}

// sendTerminate asks an ended process to shut down (onProcessTerminate).
// Its connection stays open so that the push, and the answer to the
// request that ended it, reach it, and so that its ProcessEnding can be
// answered; the SDK closes it after ProcessEnding (Destroy).
func (s *Service) sendTerminate(p *game.Process) {
	s.push(refOf(p), &sdkwire.TerminateProcess{TerminationTime: s.clock().UnixMilli()})
}

// forget tells the endpoint a process is gone for good: it closes what
// connection is left and drops what it kept for the process.
func (s *Service) forget(ref Ref) {
	if s.pusher != nil {
		s.pusher.Disconnect(ref, "server process ended")
	}
}

// ProcessDisconnected records that a process's last connection to this
// node closed without ProcessEnding. It is declared lost ProcessLostGrace later unless
// it reconnects (the SDKs reconnect on their own).
func (s *Service) ProcessDisconnected(ctx context.Context, ref Ref) error {
	now := s.clock()
	err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
		// A connection that opened here before this one closed (a
		// RefreshConnection, a quick reconnect) has taken over: its
		// ProcessConnected may have committed already, and marking the
		// process disconnected now would undo it. Asked inside the
		// transaction, which that one's write serializes with: its
		// connection was counted before its transaction began.
		if s.holds(ref) {
			return nil
		}
		// Only the node that holds the connection lets go of it: a process
		// that reconnected to another node stays connected there.
		held, err := tx.ReleaseProcess(ref, s.cfg.NodeID)
		if err != nil || !held {
			return err
		}
		p.Connected, p.DisconnectedAt = false, now
		return nil
	})
	if game.IsKind(err, game.InvalidRequest) {
		s.forget(ref) // ended already: nothing will come back
		return s.update(ctx, func(tx store.Tx) error {
			_, err := tx.ReleaseProcess(ref, s.cfg.NodeID)
			return err
		})
	}
	if game.IsKind(err, game.NotFound) {
		return nil // never recorded
	}
	return err
}

// ComputeCertificate answers GetComputeCertificate: the certificate path
// the compute registered with, and its name.
func (s *Service) ComputeCertificate(ctx context.Context, ref Ref) (*sdkwire.GetComputeCertificateResult, error) {
	var out *sdkwire.GetComputeCertificateResult
	err := s.view(ctx, func(tx store.Tx) error {
		c, err := tx.GetCompute(ref.FleetID, ref.ComputeName)
		if err == nil {
			out = &sdkwire.GetComputeCertificateResult{CertificatePath: c.CertificatePath, ComputeName: c.Name}
		}
		return err
	})
	return out, err
}
