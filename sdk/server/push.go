package server

import (
	"time"

	"github.com/anylift/anylift/internal/sdkwire"
)

// onPush handles one push. CreateGameSession and UpdateGameSession are
// ignored until ProcessReady has succeeded, as in GameLift's SDKs.
func (p *Process) onPush(f *sdkwire.Frame) {
	push, err := sdkwire.DecodePush(f)
	if err != nil {
		p.opts.Logger.Warn("dropping a malformed push", "action", f.Action, "err", err)
		return
	}
	switch m := push.(type) {
	case *sdkwire.CreateGameSession:
		p.onCreateGameSession(m)
	case *sdkwire.UpdateGameSession:
		p.mu.Lock()
		ready, cb := p.ready, p.pp.OnUpdateGameSession
		p.mu.Unlock()
		if ready && cb != nil {
			cb(UpdateGameSession{GameSession: gameSession(m.GameSession), UpdateReason: m.UpdateReason, BackfillTicketID: m.BackfillTicketId})
		}
	case *sdkwire.TerminateProcess:
		p.onTerminateProcess(m)
	case *sdkwire.RefreshConnection:
		p.refresh(m.RefreshConnectionEndpoint, m.AuthToken)
	}
}

func gameSession(g sdkwire.GameSession) GameSession {
	return GameSession{GameSessionID: g.GameSessionId, Name: g.Name, FleetID: g.FleetId,
		MaximumPlayerSessionCount: g.MaximumPlayerSessionCount, Port: g.Port, IPAddress: g.IpAddress,
		DNSName: g.DnsName, GameSessionData: g.GameSessionData, MatchmakerData: g.MatchmakerData,
		GameProperties: g.GameProperties, Location: g.Location, Status: g.Status, StatusReason: g.StatusReason}
}

func (p *Process) onCreateGameSession(m *sdkwire.CreateGameSession) {
	p.mu.Lock()
	if !p.ready {
		p.mu.Unlock()
		return
	}
	p.gameSessionID = m.GameSessionId
	cb := p.pp.OnStartGameSession
	fleet := p.params.FleetID
	p.mu.Unlock()
	props := m.GameProperties
	if props == nil {
		props = map[string]string{}
	}
	if cb != nil {
		cb(GameSession{GameSessionID: m.GameSessionId, Name: m.GameSessionName, FleetID: fleet,
			MaximumPlayerSessionCount: m.MaximumPlayerSessionCount, Port: m.Port, IPAddress: m.IpAddress,
			DNSName: m.DnsName, GameSessionData: m.GameSessionData, MatchmakerData: m.MatchmakerData,
			GameProperties: props})
	}
}

// onTerminateProcess records the termination time (sent in epoch
// milliseconds, kept in seconds) and calls OnProcessTerminate; without it
// the process ends itself.
func (p *Process) onTerminateProcess(m *sdkwire.TerminateProcess) {
	p.mu.Lock()
	p.terminationTime = m.TerminationTime / 1000
	cb := p.pp.OnProcessTerminate
	p.mu.Unlock()
	if cb != nil {
		cb()
		return
	}
	code := 0
	if err := p.ProcessEnding(); err != nil {
		code = -1
	}
	p.Destroy()
	p.opts.Exit(code)
}

// refresh opens a new connection to endpoint with token and makes it
// current; the old one is closed after DrainTimeout. If the new one
// cannot be opened the old one stays (the service asks again).
func (p *Process) refresh(endpoint, token string) {
	p.mu.Lock()
	oldEndpoint, oldToken, oldIdem := p.endpoint, p.token, p.idem
	idem := newID()
	p.endpoint, p.token, p.idem = endpoint, token, idem
	p.mu.Unlock()
	c, err := p.dial(endpoint, token, idem)
	if err != nil {
		p.opts.Logger.Warn("RefreshConnection failed; keeping the current connection", "err", err)
		p.mu.Lock()
		p.endpoint, p.token, p.idem = oldEndpoint, oldToken, oldIdem
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	old := p.conn
	if old != nil {
		p.old = append(p.old, old)
	}
	p.conn = nil
	select {
	case <-p.connected:
		p.connected = make(chan struct{})
	default: // reconnecting: the reconnection's channel stays, for use to close
	}
	p.mu.Unlock()
	p.use(c)
	if old == nil {
		return
	}
	select {
	case <-time.After(p.opts.DrainTimeout):
	case <-p.ctx.Done():
	}
	old.Close(1000, "connection refreshed")
}
