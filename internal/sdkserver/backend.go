package sdkserver

import (
	"context"
	"errors"
	"net/url"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
)

// Process identifies a server process: its pID within a compute of a fleet.
// State is kept per Process across reconnects, never per connection.
type Process struct {
	FleetID   string
	ComputeID string
	PID       string
}

// Handshake is what a process presented when it opened a connection.
type Handshake struct {
	Process
	AuthToken        string     // Authorization; "SigV4" in SigV4 mode
	SDKVersion       string     // sdkVersion
	SDKLanguage      string     // sdkLanguage: Go, Cpp or CSharp
	IdempotencyToken string     // new per connect cycle in some SDKs
	Query            url.Values // every query member as read, SigV4 ones included
	RemoteAddr       string
	// Endpoint is the URL the process reached this service at: wss:// when
	// it came over TLS, ws:// otherwise, with the host and port it asked
	// for (its Host header); "" when that host is not a plain host[:port].
	// A RefreshConnection sent without a configured public endpoint points
	// here, so a process that came over TLS stays on TLS.
	Endpoint string
}

// Authenticator decides whether a handshake may open a connection. Any
// error refuses it with HTTP 403 before the upgrade; the error's text goes
// to the log, not to the process.
type Authenticator interface {
	Authenticate(ctx context.Context, h *Handshake) error
}

// Backend carries out the requests of processes. Every method is given the
// Process that sent the request, so a backend can confine each process to
// its own game and player sessions. A method's error answers the request:
// an *sdkwire.Error with its status, a *game.Error with the status of its
// kind (see statusOf), anything else 500 with a generic message. Each call
// runs under a deadline (Config.ActivateTimeout for ActivateServerProcess,
// Config.RequestTimeout otherwise). Calls for one connection come one at a
// time, in the order the frames arrived.
type Backend interface {
	ActivateServerProcess(ctx context.Context, p Process, r *sdkwire.ActivateServerProcess) error
	HeartbeatServerProcess(ctx context.Context, p Process, r *sdkwire.HeartbeatServerProcess) error
	ActivateGameSession(ctx context.Context, p Process, r *sdkwire.ActivateGameSession) error
	UpdatePlayerSessionCreationPolicy(ctx context.Context, p Process, r *sdkwire.UpdatePlayerSessionCreationPolicy) error
	AcceptPlayerSession(ctx context.Context, p Process, r *sdkwire.AcceptPlayerSession) error
	RemovePlayerSession(ctx context.Context, p Process, r *sdkwire.RemovePlayerSession) error
	DescribePlayerSessions(ctx context.Context, p Process, r *sdkwire.DescribePlayerSessions) (*sdkwire.DescribePlayerSessionsResult, error)
	StartMatchBackfill(ctx context.Context, p Process, r *sdkwire.StartMatchBackfill) (*sdkwire.StartMatchBackfillResult, error)
	StopMatchBackfill(ctx context.Context, p Process, r *sdkwire.StopMatchBackfill) error
	GetComputeCertificate(ctx context.Context, p Process) (*sdkwire.GetComputeCertificateResult, error)
	GetFleetRoleCredentials(ctx context.Context, p Process, r *sdkwire.GetFleetRoleCredentials) (*sdkwire.GetFleetRoleCredentialsResult, error)
	// TerminateServerProcess records ProcessEnding. Once it has succeeded the
	// process's later disconnection is a normal exit: ProcessDisconnected is
	// not called for it.
	TerminateServerProcess(ctx context.Context, p Process) error

	// ProcessConnected is called after each successful upgrade, reconnects
	// and refreshed connections included, before any frame is read.
	ProcessConnected(ctx context.Context, h *Handshake)
	// ProcessDisconnected is called when the last connection of a process
	// that has not ended (no successful TerminateServerProcess) closes. The
	// process may come back; the backend decides when it is lost.
	ProcessDisconnected(ctx context.Context, p Process)
}

// statusOf translates a Backend error into the StatusCode and ErrorMessage
// of the answer: the one table for the SDK protocol.
func statusOf(err error) (int, string) {
	var we *sdkwire.Error
	if errors.As(err, &we) {
		return we.Status, we.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return 500, "the service did not answer in time"
	}
	var ge *game.Error
	if !errors.As(err, &ge) {
		return 500, "internal service error"
	}
	switch ge.Kind {
	case game.InvalidRequest, game.InvalidGameSessionStatus, game.GameSessionFull,
		game.InvalidFleetStatus, game.NotReady, game.IdempotentParameterMismatch:
		return 400, ge.Message
	case game.Unauthorized:
		return 403, ge.Message
	case game.NotFound:
		return 404, ge.Message
	case game.Conflict:
		return 409, ge.Message
	case game.LimitExceeded, game.FleetCapacityExceeded:
		return 429, ge.Message
	}
	return 500, "internal service error"
}

// dispatch calls the Backend method for r and returns the result to send.
func dispatch(ctx context.Context, b Backend, p Process, r sdkwire.Request) (any, error) {
	switch r := r.(type) {
	case *sdkwire.ActivateServerProcess:
		return nil, b.ActivateServerProcess(ctx, p, r)
	case *sdkwire.HeartbeatServerProcess:
		return nil, b.HeartbeatServerProcess(ctx, p, r)
	case *sdkwire.ActivateGameSession:
		return nil, b.ActivateGameSession(ctx, p, r)
	case *sdkwire.UpdatePlayerSessionCreationPolicy:
		return nil, b.UpdatePlayerSessionCreationPolicy(ctx, p, r)
	case *sdkwire.AcceptPlayerSession:
		return nil, b.AcceptPlayerSession(ctx, p, r)
	case *sdkwire.RemovePlayerSession:
		return nil, b.RemovePlayerSession(ctx, p, r)
	case *sdkwire.DescribePlayerSessions:
		res, err := b.DescribePlayerSessions(ctx, p, r)
		if res != nil && res.PlayerSessions == nil {
			res.PlayerSessions = []sdkwire.PlayerSession{}
		}
		return orNil(res, err)
	case *sdkwire.StartMatchBackfill:
		return orNil(b.StartMatchBackfill(ctx, p, r))
	case *sdkwire.StopMatchBackfill:
		return nil, b.StopMatchBackfill(ctx, p, r)
	case *sdkwire.GetComputeCertificate:
		return orNil(b.GetComputeCertificate(ctx, p))
	case *sdkwire.GetFleetRoleCredentials:
		return orNil(b.GetFleetRoleCredentials(ctx, p, r))
	case *sdkwire.TerminateServerProcess:
		return nil, b.TerminateServerProcess(ctx, p)
	}
	return nil, sdkwire.Errorf(400, "unknown Action %q", r.Action())
}

// orNil turns a typed nil result into an untyped nil, so that it encodes
// as a plain success.
func orNil[T any](res *T, err error) (any, error) {
	if err != nil || res == nil {
		return nil, err
	}
	return res, nil
}
