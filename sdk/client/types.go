package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Seat is a reserved seat in a game session and how to reach its server.
type Seat struct {
	GameSessionID   string
	PlayerSessionID string // empty when a backend created a session for no player
	PlayerID        string
	IPAddress       string
	DNSName         string
	Port            int
	Location        string
}

// Address is host:port of the game server, by IP address.
func (s Seat) Address() string { return fmt.Sprintf("%s:%d", s.IPAddress, s.Port) }

// SessionInfo is a game session found by a search.
type SessionInfo struct {
	GameSessionID  string
	Name           string
	FleetID        string
	Location       string
	Status         string
	CurrentPlayers int
	MaxPlayers     int
	CreationPolicy string // ACCEPT_ALL or DENY_ALL
	Properties     map[string]string
	CreationTime   time.Time
}

// CreateSessionRequest creates a game session on a fleet or an alias
// (exactly one). The call waits until the session is ACTIVE and reserves
// a seat for the player: the token's player over the gateway, PlayerID
// (or Config.PlayerID) over the control plane, where without a player id
// no seat is reserved.
type CreateSessionRequest struct {
	FleetID, AliasID string
	Location         string // the fleet's first location when empty
	Name             string
	MaxPlayers       int
	Properties       map[string]string
	SessionData      string
	IdempotencyToken string
	PlayerID         string
	PlayerData       string
}

// CreateSessionOnQueueRequest places a game session through a queue and
// waits until the placement is FULFILLED, with a seat for the player.
type CreateSessionOnQueueRequest struct {
	QueueName   string
	Name        string
	MaxPlayers  int
	Properties  map[string]string
	SessionData string
	// PlacementID names the placement (a retry answers the same one);
	// generated when empty.
	PlacementID string
	PlayerID    string
	PlayerData  string
}

// SearchSessionsRequest searches ACTIVE game sessions of a fleet or alias
// with GameLift's filter and sort expressions.
type SearchSessionsRequest struct {
	FleetID, AliasID string
	Location         string
	Filter, Sort     string
	Limit            int
	NextToken        string
}

// SearchSessionsResult is one page of a search.
type SearchSessionsResult struct {
	Sessions  []SessionInfo
	NextToken string
}

// JoinSessionRequest joins a game session: reserve a seat (unless Seat
// already holds one, as CreateSession answers), then connect.
type JoinSessionRequest struct {
	GameSessionID string
	PlayerID      string // control plane only; Config.PlayerID when empty
	PlayerData    string
	Seat          *Seat
}

// Hooks are the game's side of joining and leaving: Connect opens the
// connection to the game server with the seat's details (and presents the
// player session id); Disconnect closes it.
type Hooks struct {
	Connect    func(ctx context.Context, seat Seat) error
	Disconnect func(ctx context.Context, seat Seat) error
}

// Notifications receive the results of the asynchronous calls, each on
// the goroutine that made the call. Unset handlers drop their results.
type Notifications struct {
	OnCreateSession        func(Seat, error)
	OnCreateSessionOnQueue func(Seat, error)
	OnSearchSessions       func(SearchSessionsResult, error)
	OnJoinSession          func(Seat, error)
	OnLeaveSession         func(error)
}

// Error codes. Server-side codes are those of the player gateway (and of
// GameLift's exceptions without the "Exception" suffix over the control
// plane); the rest arise in the client.
const (
	CodeInvalidParameter         = "InvalidParameter"
	CodeNotJoined                = "NotJoined"
	CodeAlreadyJoined            = "AlreadyJoined"
	CodeConnectFailed            = "ConnectFailed"
	CodeNetwork                  = "NetworkError"
	CodeClosed                   = "ClientClosed"
	CodeUnsupported              = "Unsupported"
	CodeGameSessionFull          = "GameSessionFull"
	CodeNotFound                 = "NotFound"
	CodeInvalidGameSessionStatus = "InvalidGameSessionStatus"
	CodeInvalidToken             = "InvalidToken"
	CodeMissingToken             = "MissingToken"
	CodeRateLimited              = "RateLimited"
	CodeActivationTimeout        = "ActivationTimeout"
	CodePlacementFailed          = "PlacementFailed"
	CodeSeatNotReserved          = "SeatNotReserved"
	CodeInternal                 = "InternalError"
)

// Error is every failure the client reports. Code is stable; Message can
// be shown to a player; GameSessionID names a session that exists even
// though the call failed (created, but no seat).
type Error struct {
	Code          string
	Message       string
	GameSessionID string
	Cause         string // the code behind SeatNotReserved
	Status        int    // the HTTP status, when the server answered
	Err           error  // the underlying error, for client-side failures
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

// CodeOf is err's code: an *Error's Code, or "" for other errors.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
