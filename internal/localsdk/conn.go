// Package localsdk is the server SDK over HTTP on the loopback interface.
// The agent holds each launched server process's SDK connection to the
// service (a Conn, over sdk/server) and serves its actions as HTTP+JSON to
// that process alone (Server), so that a game written in any language
// that speaks HTTP hosts game sessions. What the service pushes (a game
// session to start, an update, a termination) waits in a short log per
// process, read by long poll or Server-Sent Events. The agent's built-in
// wrapper drives a Conn directly, in process.
package localsdk

import (
	"context"
	"sync"

	"github.com/anylift/anylift/sdk/server"
)

// maxEvents is how many pushed events a Conn keeps for its process;
// older ones are dropped (a process reads them within moments).
const maxEvents = 32

// Conn is the SDK connection the agent holds for one server process. It
// connects when the process calls Ready and is closed by Close. Its
// methods are safe for concurrent use; each returns the SDK's errors
// (*server.Error).
type Conn struct {
	pid    string
	params func() server.ServerParameters
	opts   server.Options

	mu          sync.Mutex
	proc        *server.Process // set once Init succeeded
	readying    bool
	ready       bool // ProcessReady succeeded and ProcessEnding was not called
	closed      bool
	healthy     bool
	port        int
	gameSession string
	terminateAt int64   // epoch seconds, once TerminateProcess came
	events      []Event // the last maxEvents, oldest first
	seq         uint64  // Seq of the last event
	changed     chan struct{}
}

// NewConn returns the connection of server process pid, not yet
// connected. params is called when the process calls Ready, so that a
// process readied long after its launch connects with the agent's
// current auth token. opts are the SDK's; the environment is never read
// (Getenv is replaced) and a TerminateProcess never exits the agent.
func NewConn(pid string, params func() server.ServerParameters, opts server.Options) *Conn {
	opts.Getenv = func(string) string { return "" }
	opts.Exit = func(int) {}
	return &Conn{pid: pid, params: params, opts: opts, healthy: true, changed: make(chan struct{})}
}

// PID is the server process id the connection is for.
func (c *Conn) PID() string { return c.pid }

// Ready connects to the service and calls ProcessReady with the game's
// port and log paths. It may succeed once.
func (c *Conn) Ready(port int, logPaths []string) error {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return &server.Error{Type: server.NotInitialized, Message: "the process has ended"}
	case c.readying || c.proc != nil:
		c.mu.Unlock()
		return &server.Error{Type: server.AlreadyInitialized, Message: "ProcessReady was already called"}
	}
	c.readying = true
	c.mu.Unlock()

	p, err := server.Init(c.params(), c.opts)
	c.mu.Lock()
	c.readying = false
	closed := c.closed
	if err == nil && !closed {
		c.proc = p
	}
	c.mu.Unlock()
	switch {
	case err != nil:
		return err
	case closed: // Close came while connecting
		p.Destroy()
		return &server.Error{Type: server.NotInitialized, Message: "the process has ended"}
	}
	err = p.ProcessReady(server.ProcessParameters{
		Port: port, LogParameters: server.LogParameters{LogPaths: logPaths},
		OnStartGameSession: c.started, OnUpdateGameSession: c.updated,
		OnProcessTerminate: c.terminated, OnHealthCheck: c.Healthy,
	})
	if err != nil {
		c.mu.Lock()
		c.proc = nil
		c.mu.Unlock()
		p.Destroy()
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ready, c.port = !c.closed, port
	return nil
}

// process returns the connected SDK process, or the error of a call made
// before Ready.
func (c *Conn) process() (*server.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil, &server.Error{Type: server.ProcessNotReady, Message: "call ready first"}
	}
	return c.proc, nil
}

// SetHealth sets what the agent answers the SDK's health checks with
// (healthy until the process says otherwise).
func (c *Conn) SetHealth(healthy bool) {
	c.mu.Lock()
	c.healthy = healthy
	c.mu.Unlock()
}

// Healthy is the health the SDK reports at its next heartbeat.
func (c *Conn) Healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.healthy
}

// State is what the process's connection knows.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return State{ProcessId: c.pid, Ready: c.ready, Port: c.port, Healthy: c.healthy,
		GameSessionId: c.gameSession, TerminationTime: c.terminateAt, LastEvent: c.seq}
}

// ActivateGameSession tells the service the started game session is ready
// for players.
func (c *Conn) ActivateGameSession() error {
	p, err := c.process()
	if err != nil {
		return err
	}
	return p.ActivateGameSession()
}

// AcceptPlayerSession validates a joining player's player session.
func (c *Conn) AcceptPlayerSession(id string) error {
	p, err := c.process()
	if err != nil {
		return err
	}
	return p.AcceptPlayerSession(id)
}

// RemovePlayerSession reports a player gone.
func (c *Conn) RemovePlayerSession(id string) error {
	p, err := c.process()
	if err != nil {
		return err
	}
	return p.RemovePlayerSession(id)
}

// UpdatePlayerSessionCreationPolicy lets new players in or keeps them out.
func (c *Conn) UpdatePlayerSessionCreationPolicy(policy string) error {
	p, err := c.process()
	if err != nil {
		return err
	}
	return p.UpdatePlayerSessionCreationPolicy(server.PlayerSessionCreationPolicy(policy))
}

// DescribePlayerSessions reads player sessions.
func (c *Conn) DescribePlayerSessions(req server.DescribePlayerSessionsRequest) (server.DescribePlayerSessionsResult, error) {
	p, err := c.process()
	if err != nil {
		return server.DescribePlayerSessionsResult{}, err
	}
	return p.DescribePlayerSessions(req)
}

// StartMatchBackfill asks FlexMatch for more players.
func (c *Conn) StartMatchBackfill(req server.StartMatchBackfillRequest) (server.StartMatchBackfillResult, error) {
	p, err := c.process()
	if err != nil {
		return server.StartMatchBackfillResult{}, err
	}
	return p.StartMatchBackfill(req)
}

// StopMatchBackfill cancels a backfill ticket.
func (c *Conn) StopMatchBackfill(req server.StopMatchBackfillRequest) error {
	p, err := c.process()
	if err != nil {
		return err
	}
	return p.StopMatchBackfill(req)
}

// GetComputeCertificate asks for the compute's certificate path and name.
func (c *Conn) GetComputeCertificate() (server.ComputeCertificate, error) {
	p, err := c.process()
	if err != nil {
		return server.ComputeCertificate{}, err
	}
	return p.GetComputeCertificate()
}

// GetFleetRoleCredentials asks for credentials of the fleet's role.
func (c *Conn) GetFleetRoleCredentials(req server.FleetRoleCredentialsRequest) (server.FleetRoleCredentials, error) {
	p, err := c.process()
	if err != nil {
		return server.FleetRoleCredentials{}, err
	}
	return p.GetFleetRoleCredentials(req)
}

// ProcessEnding tells the service the process is shutting down; its game
// session ends and health reports stop. The connection stays open until
// Close, so that the service hears the process's exit from the agent.
func (c *Conn) ProcessEnding() error {
	p, err := c.process()
	if err != nil {
		return err
	}
	if err := p.ProcessEnding(); err != nil {
		return err
	}
	c.mu.Lock()
	c.ready = false
	c.mu.Unlock()
	return nil
}

// Close closes the connection (without ProcessEnding) and ends every wait
// for events. It waits for the SDK's goroutines.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.ready = true, false
	p := c.proc
	close(c.changed)
	c.mu.Unlock()
	if p != nil {
		p.Destroy()
	}
}

// Events returns the events after Seq after, oldest first, waiting until
// there is one, ctx ends or the connection closes (then with none). The
// second result reports the connection closed.
func (c *Conn) Events(ctx context.Context, after uint64) ([]Event, bool) {
	for {
		c.mu.Lock()
		out := c.since(after)
		closed, changed := c.closed, c.changed
		c.mu.Unlock()
		if len(out) > 0 || closed {
			return out, closed
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-changed:
		}
	}
}

// since copies the kept events after Seq after; c.mu is held.
func (c *Conn) since(after uint64) []Event {
	var out []Event
	for _, e := range c.events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out
}

// publish appends e to the log and wakes the waiters.
func (c *Conn) publish(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.seq++
	e.Seq = c.seq
	if len(c.events) == maxEvents {
		c.events = append(c.events[:0], c.events[1:]...)
	}
	c.events = append(c.events, e)
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Conn) started(gs server.GameSession) {
	c.mu.Lock()
	c.gameSession = gs.GameSessionID
	c.mu.Unlock()
	c.publish(Event{Type: EventStartGameSession, GameSession: wireSession(gs)})
}

func (c *Conn) updated(u server.UpdateGameSession) {
	c.publish(Event{Type: EventUpdateGameSession, GameSession: wireSession(u.GameSession),
		UpdateReason: u.UpdateReason, BackfillTicketId: u.BackfillTicketID})
}

func (c *Conn) terminated() {
	p, err := c.process()
	var at int64
	if err == nil {
		at, _ = p.GetTerminationTime()
	}
	c.mu.Lock()
	c.terminateAt = at
	c.mu.Unlock()
	c.publish(Event{Type: EventProcessTerminate, TerminationTime: at})
}
