// Package sdktest provides an in-memory sdkserver.Backend and
// Authenticator, and an endpoint started on 127.0.0.1:0, for tests of the
// process endpoint and of the Go server SDK. It enforces the rules a real
// backend must (a process touches only its own game session; player
// sessions go RESERVED → ACTIVE → COMPLETED) but keeps nothing durable.
package sdktest

import (
	"context"
	"fmt"
	"sync"

	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/sdkwire"
)

// Event is one call the Backend received.
type Event struct {
	Action  string // a request Action, or "Connected" / "Disconnected"
	Process sdkserver.Process
	Request sdkwire.Request // nil for Connected and Disconnected
}

// Backend is an in-memory sdkserver.Backend and Authenticator.
type Backend struct {
	// Events receives every call, in order; tests read it to wait for
	// something to happen. It is buffered generously; a test that lets it
	// fill blocks the endpoint.
	Events chan Event

	mu        sync.Mutex
	tokens    map[[2]string]string // fleet, compute → token
	processes map[sdkserver.Process]*Proc
	sessions  map[string]*Session
}

// Proc is what the Backend knows of a process.
type Proc struct {
	Active      bool
	Ended       bool
	Port        int
	Healthy     bool
	Heartbeats  int
	GameSession string
	Policy      string
}

// Session is a game session held by one process.
type Session struct {
	Process sdkserver.Process
	Status  string // ACTIVATING, ACTIVE
	Players map[string]*sdkwire.PlayerSession
}

// NewBackend returns an empty Backend.
func NewBackend() *Backend {
	return &Backend{
		Events:    make(chan Event, 1024),
		tokens:    map[[2]string]string{},
		processes: map[sdkserver.Process]*Proc{},
		sessions:  map[string]*Session{},
	}
}

// AllowToken lets processes of fleet on compute connect with token.
func (b *Backend) AllowToken(fleet, compute, token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens[[2]string{fleet, compute}] = token
}

// Authenticate accepts a handshake whose token was allowed for its fleet
// and compute.
func (b *Backend) Authenticate(_ context.Context, h *sdkserver.Handshake) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.tokens[[2]string{h.FleetID, h.ComputeID}]; !ok || t != h.AuthToken {
		return fmt.Errorf("bad token for %s/%s", h.FleetID, h.ComputeID)
	}
	return nil
}

// Process returns a copy of what the Backend knows of p.
func (b *Backend) Process(p sdkserver.Process) (Proc, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pr, ok := b.processes[p]
	if !ok {
		return Proc{}, false
	}
	return *pr, true
}

// AddGameSession records game session id as ACTIVATING on process p.
func (b *Backend) AddGameSession(p sdkserver.Process, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessions[id] = &Session{Process: p, Status: "ACTIVATING", Players: map[string]*sdkwire.PlayerSession{}}
	if pr := b.processes[p]; pr != nil {
		pr.GameSession = id
	}
}

// AddPlayerSession reserves a seat in game session gs.
func (b *Backend) AddPlayerSession(gs, psID, playerID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[gs]
	s.Players[psID] = &sdkwire.PlayerSession{PlayerSessionId: psID, PlayerId: playerID, GameSessionId: gs,
		FleetId: s.Process.FleetID, Status: "RESERVED"}
}

// SessionStatus returns the status of game session gs and of its player
// sessions by id.
func (b *Backend) SessionStatus(gs string) (string, map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[gs]
	if !ok {
		return "", nil
	}
	ps := map[string]string{}
	for id, p := range s.Players {
		ps[id] = p.Status
	}
	return s.Status, ps
}

func (b *Backend) record(action string, p sdkserver.Process, r sdkwire.Request) {
	b.Events <- Event{Action: action, Process: p, Request: r}
}
