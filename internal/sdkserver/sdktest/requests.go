package sdktest

import (
	"context"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
)

// own returns the game session id of p, refusing a session not its own.
// b.mu must be held.
func (b *Backend) own(p sdkserver.Process, gs string) (*Session, error) {
	s, ok := b.sessions[gs]
	if !ok {
		return nil, sdkwire.Errorf(404, "game session %s not found", gs)
	}
	if s.Process != p {
		return nil, sdkwire.Errorf(403, "game session %s belongs to another process", gs)
	}
	return s, nil
}

func (b *Backend) ActivateServerProcess(_ context.Context, p sdkserver.Process, r *sdkwire.ActivateServerProcess) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	pr := b.processes[p]
	if pr == nil {
		pr = &Proc{}
		b.processes[p] = pr
	}
	if pr.Active {
		return sdkwire.Errorf(409, "process %s is already active", p.PID)
	}
	pr.Active, pr.Port, pr.Healthy = true, r.Port, true
	return nil
}

func (b *Backend) HeartbeatServerProcess(_ context.Context, p sdkserver.Process, r *sdkwire.HeartbeatServerProcess) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	pr := b.processes[p]
	if pr == nil || !pr.Active {
		return sdkwire.Errorf(400, "process %s is not active", p.PID)
	}
	pr.Healthy = r.HealthStatus
	pr.Heartbeats++
	return nil
}

func (b *Backend) ActivateGameSession(_ context.Context, p sdkserver.Process, r *sdkwire.ActivateGameSession) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.own(p, r.GameSessionId)
	if err != nil {
		return err
	}
	if s.Status != "ACTIVATING" {
		return sdkwire.Errorf(400, "game session %s is %s", r.GameSessionId, s.Status)
	}
	s.Status = "ACTIVE"
	return nil
}

func (b *Backend) UpdatePlayerSessionCreationPolicy(_ context.Context, p sdkserver.Process, r *sdkwire.UpdatePlayerSessionCreationPolicy) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.own(p, r.GameSessionId); err != nil {
		return err
	}
	b.processes[p].Policy = r.PlayerSessionPolicy
	return nil
}

func (b *Backend) AcceptPlayerSession(_ context.Context, p sdkserver.Process, r *sdkwire.AcceptPlayerSession) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.own(p, r.GameSessionId)
	if err != nil {
		return err
	}
	ps, ok := s.Players[r.PlayerSessionId]
	if !ok || ps.Status != "RESERVED" {
		return sdkwire.Errorf(400, "Invalid player session")
	}
	ps.Status = "ACTIVE"
	return nil
}

func (b *Backend) RemovePlayerSession(_ context.Context, p sdkserver.Process, r *sdkwire.RemovePlayerSession) error {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.own(p, r.GameSessionId)
	if err != nil {
		return err
	}
	ps, ok := s.Players[r.PlayerSessionId]
	if !ok || (ps.Status != "RESERVED" && ps.Status != "ACTIVE") {
		return sdkwire.Errorf(400, "Invalid player session")
	}
	ps.Status = "COMPLETED"
	return nil
}

func (b *Backend) DescribePlayerSessions(_ context.Context, p sdkserver.Process, r *sdkwire.DescribePlayerSessions) (*sdkwire.DescribePlayerSessionsResult, error) {
	defer b.record(r.Action(), p, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	res := &sdkwire.DescribePlayerSessionsResult{}
	for id, s := range b.sessions {
		if s.Process != p || (r.GameSessionId != "" && r.GameSessionId != id) {
			continue
		}
		for _, ps := range s.Players {
			if (r.PlayerSessionId == "" || r.PlayerSessionId == ps.PlayerSessionId) &&
				(r.PlayerId == "" || r.PlayerId == ps.PlayerId) &&
				(r.PlayerSessionStatusFilter == "" || r.PlayerSessionStatusFilter == ps.Status) {
				res.PlayerSessions = append(res.PlayerSessions, *ps)
			}
		}
	}
	return res, nil
}

func (b *Backend) StartMatchBackfill(_ context.Context, p sdkserver.Process, r *sdkwire.StartMatchBackfill) (*sdkwire.StartMatchBackfillResult, error) {
	b.record(r.Action(), p, r)
	t := r.TicketId
	if t == "" {
		t = "ticket-1"
	}
	return &sdkwire.StartMatchBackfillResult{TicketId: t}, nil
}

func (b *Backend) StopMatchBackfill(_ context.Context, p sdkserver.Process, r *sdkwire.StopMatchBackfill) error {
	b.record(r.Action(), p, r)
	return nil
}

func (b *Backend) GetComputeCertificate(_ context.Context, p sdkserver.Process) (*sdkwire.GetComputeCertificateResult, error) {
	b.record(sdkwire.ActionGetComputeCertificate, p, &sdkwire.GetComputeCertificate{})
	return &sdkwire.GetComputeCertificateResult{ComputeName: p.ComputeID}, nil
}

// GetFleetRoleCredentials answers with empty credentials, as for a fleet
// that is not managed.
func (b *Backend) GetFleetRoleCredentials(_ context.Context, p sdkserver.Process, r *sdkwire.GetFleetRoleCredentials) (*sdkwire.GetFleetRoleCredentialsResult, error) {
	b.record(r.Action(), p, r)
	return &sdkwire.GetFleetRoleCredentialsResult{}, nil
}

func (b *Backend) TerminateServerProcess(_ context.Context, p sdkserver.Process) error {
	defer b.record(sdkwire.ActionTerminateServerProcess, p, &sdkwire.TerminateServerProcess{})
	b.mu.Lock()
	defer b.mu.Unlock()
	pr := b.processes[p]
	if pr == nil {
		pr = &Proc{}
		b.processes[p] = pr
	}
	pr.Ended = true
	if s := b.sessions[pr.GameSession]; s != nil {
		s.Status = "TERMINATED"
	}
	return nil
}

func (b *Backend) ProcessConnected(_ context.Context, h *sdkserver.Handshake) {
	b.record("Connected", h.Process, nil)
}

func (b *Backend) ProcessDisconnected(_ context.Context, p sdkserver.Process) {
	b.record("Disconnected", p, nil)
}
