package agent

import (
	"sync"

	"github.com/anylift/anylift/internal/localsdk"
	"github.com/anylift/anylift/sdk/server"
)

// sdkCreds are the SDK endpoint and the auth token of the agent's latest
// registration and token, shared with the connections it holds for its
// processes: a process that calls ready long after its launch connects
// with a token still valid. The loop writes them; connections read them.
type sdkCreds struct {
	mu              sync.Mutex
	endpoint, token string
}

func (c *sdkCreds) set(endpoint, token string) {
	c.mu.Lock()
	c.endpoint, c.token = endpoint, token
	c.mu.Unlock()
}

func (c *sdkCreds) get() (endpoint, token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoint, c.token
}

// shareCreds publishes the loop's endpoint and token to the connections.
func (a *Agent) shareCreds() { a.shared.set(a.sdkEndpoint, a.token) }

// newConn is the SDK connection the agent holds for server process pid,
// connected when the process (or the wrapper) calls ready.
func (a *Agent) newConn(pid string) *localsdk.Conn {
	params := func() server.ServerParameters {
		endpoint, token := a.shared.get()
		return server.ServerParameters{WebSocketURL: endpoint, ProcessID: pid, HostID: a.cfg.ComputeName,
			FleetID: a.cfg.FleetID, AuthToken: token}
	}
	return localsdk.NewConn(pid, params, server.Options{Logger: a.log.With("pid", pid)})
}

// localEnv serves a local SDK connection to p alone, and returns the
// variables that name it; none without the local SDK. conn is the
// connection the wrapper holds for p, or nil for a new one.
func (a *Agent) localEnv(p *proc, conn *localsdk.Conn) []string {
	if a.local == nil {
		return nil
	}
	if conn == nil {
		conn = a.newConn(p.pid)
	}
	p.sdkToken = a.local.Add(conn)
	return []string{localsdk.EnvURL + "=" + a.local.URL(), localsdk.EnvToken + "=" + p.sdkToken}
}

// dropLocal stops serving p's local SDK connection and closes it.
func (a *Agent) dropLocal(p *proc) {
	if a.local != nil && p.sdkToken != "" {
		a.local.Remove(p.sdkToken)
	}
}
