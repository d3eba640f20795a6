package server

import (
	"sync"
)

// Notifications are the session-notification style of engine integrations.
// Every member is optional.
type Notifications struct {
	// OnCreateSessionBegin is called when the service starts a game session
	// on this process: load the level here. Returning false refuses the
	// session, which then ends as by destroy.
	OnCreateSessionBegin func(GameSession) bool
	// OnCreateSessionEnd is called once the game session is ACTIVE.
	OnCreateSessionEnd func()
	// OnSessionHealthCheck reports health regularly; nil reports healthy.
	OnSessionHealthCheck func() bool
	// OnUpdateSession receives game session updates (matchmaking backfill).
	OnUpdateSession func(UpdateGameSession)
	// OnDestroySessionBegin is called when the game session is to end (the
	// service asked, or its last player left): clean up here. Returning
	// false stops the destroy.
	OnDestroySessionBegin func() bool
	// OnDestroySessionEnd is called after ProcessEnding and Destroy: exit
	// the program here.
	OnDestroySessionEnd func()
}

// notifier holds the session-notification state: the players present and
// whether the session ends when the last one leaves.
type notifier struct {
	n Notifications

	mu        sync.Mutex
	passive   bool
	players   map[string]bool
	destroyed chan struct{}
	once      sync.Once
}

// NotifyProcessReady is ProcessReady in the session-notification style:
// the game session's life arrives through n's callbacks, and the SDK
// activates the game session itself. Passive destroy is on: see
// SetPassiveDestroy.
func (p *Process) NotifyProcessReady(port int, logPaths []string, n Notifications) error {
	nt := &notifier{n: n, passive: true, players: map[string]bool{}, destroyed: make(chan struct{})}
	p.mu.Lock()
	p.notify = nt
	p.mu.Unlock()
	return p.ProcessReady(ProcessParameters{
		Port:                port,
		LogParameters:       LogParameters{LogPaths: logPaths},
		OnStartGameSession:  func(gs GameSession) { p.beginSession(nt, gs) },
		OnUpdateGameSession: n.OnUpdateSession,
		OnProcessTerminate:  func() { p.destroySession(nt) },
		OnHealthCheck:       n.OnSessionHealthCheck,
	})
}

// SetPassiveDestroy switches passive destroy: with it on (the default)
// RemovePlayerSession of the last accepted player ends the game session.
// It applies to the session-notification style only.
func (p *Process) SetPassiveDestroy(on bool) {
	if nt := p.notifier(); nt != nil {
		nt.mu.Lock()
		nt.passive = on
		nt.mu.Unlock()
	}
}

// SessionDestroyed is closed once the session-notification style has ended
// the game session (after OnDestroySessionEnd). Nil without NotifyProcessReady.
func (p *Process) SessionDestroyed() <-chan struct{} {
	if nt := p.notifier(); nt != nil {
		return nt.destroyed
	}
	return nil
}

func (p *Process) notifier() *notifier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notify
}

func (p *Process) beginSession(nt *notifier, gs GameSession) {
	if nt.n.OnCreateSessionBegin != nil && !nt.n.OnCreateSessionBegin(gs) {
		p.opts.Logger.Warn("the game refused the game session", "id", gs.GameSessionID)
		p.destroySession(nt)
		return
	}
	if err := p.ActivateGameSession(); err != nil {
		p.opts.Logger.Error("activating the game session failed", "err", err)
		p.destroySession(nt)
		return
	}
	if nt.n.OnCreateSessionEnd != nil {
		nt.n.OnCreateSessionEnd()
	}
}

// destroySession ends the game session once: OnDestroySessionBegin,
// ProcessEnding, Destroy, OnDestroySessionEnd.
func (p *Process) destroySession(nt *notifier) {
	if nt.n.OnDestroySessionBegin != nil && !nt.n.OnDestroySessionBegin() {
		return
	}
	nt.once.Do(func() {
		if err := p.ProcessEnding(); err != nil {
			p.opts.Logger.Error("ProcessEnding failed", "err", err)
		}
		p.Destroy()
		if nt.n.OnDestroySessionEnd != nil {
			nt.n.OnDestroySessionEnd()
		}
		close(nt.destroyed)
	})
}

func (p *Process) playerJoined(id string) {
	if nt := p.notifier(); nt != nil {
		nt.mu.Lock()
		nt.players[id] = true
		nt.mu.Unlock()
	}
}

// playerLeft ends the game session, in its own goroutine, when the last
// accepted player has left and passive destroy is on.
func (p *Process) playerLeft(id string) {
	nt := p.notifier()
	if nt == nil {
		return
	}
	nt.mu.Lock()
	had := nt.players[id]
	delete(nt.players, id)
	last := had && len(nt.players) == 0 && nt.passive
	nt.mu.Unlock()
	if last {
		go p.destroySession(nt)
	}
}
