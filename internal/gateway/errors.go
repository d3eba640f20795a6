package gateway

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/anylift/anylift/internal/game"
)

// Codes are the stable error codes a game sees in an error answer's Code.
const (
	CodeInvalidRequest           = "InvalidRequest"
	CodeNotFound                 = "NotFound"
	CodeGameSessionFull          = "GameSessionFull"
	CodeInvalidGameSessionStatus = "InvalidGameSessionStatus"
	CodeFleetCapacityExceeded    = "FleetCapacityExceeded"
	CodeLimitExceeded            = "LimitExceeded"
	CodeTerminalRouting          = "TerminalRoutingStrategy"
	CodeIdempotentMismatch       = "IdempotentParameterMismatch"
	CodeInvalidFleetStatus       = "InvalidFleetStatus"
	CodeUnavailable              = "Unavailable"
	CodeInternal                 = "InternalError"

	CodeMissingToken       = "MissingToken"
	CodeInvalidToken       = "InvalidToken"
	CodeForbidden          = "Forbidden"
	CodeRateLimited        = "RateLimited"
	CodeActivationTimeout  = "ActivationTimeout"
	CodeGameSessionFailed  = "GameSessionFailed"
	CodeSeatNotReserved    = "SeatNotReserved"
	CodeRejoinWindowClosed = "RejoinWindowClosed"
	CodeAlreadyJoined      = "AlreadyJoined"
	CodePlacementFailed    = "PlacementFailed"
	CodeUnsupported        = "Unsupported"
)

// Error is the body of every error answer:
//
//	{"Code": "GameSessionFull", "Message": "...", "GameSessionId": "..."}
//
// GameSessionId is set when a game session exists that the caller should
// know of (created, but the caller's seat could not be reserved).
type Error struct {
	Status        int    `json:"-"`
	Code          string `json:"Code"`
	Message       string `json:"Message"`
	GameSessionID string `json:"GameSessionId,omitempty"`
	// Cause is the code of the failure behind SeatNotReserved.
	Cause string `json:"Cause,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func fail(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// kindCodes is the one table from control-layer error kinds to the
// gateway's codes and statuses.
var kindCodes = map[game.Kind]struct {
	code   string
	status int
}{
	game.InvalidRequest:              {CodeInvalidRequest, http.StatusBadRequest},
	game.NotFound:                    {CodeNotFound, http.StatusNotFound},
	game.GameSessionFull:             {CodeGameSessionFull, http.StatusConflict},
	game.InvalidGameSessionStatus:    {CodeInvalidGameSessionStatus, http.StatusConflict},
	game.FleetCapacityExceeded:       {CodeFleetCapacityExceeded, http.StatusServiceUnavailable},
	game.LimitExceeded:               {CodeLimitExceeded, http.StatusTooManyRequests},
	game.TerminalRoutingStrategy:     {CodeTerminalRouting, http.StatusConflict},
	game.IdempotentParameterMismatch: {CodeIdempotentMismatch, http.StatusConflict},
	game.InvalidFleetStatus:          {CodeInvalidFleetStatus, http.StatusConflict},
	game.Conflict:                    {CodeUnavailable, http.StatusServiceUnavailable},
	game.NotReady:                    {CodeUnavailable, http.StatusServiceUnavailable},
}

// asError translates err for the caller once: gateway errors pass, a
// control-layer *game.Error keeps its message under its code, and
// anything else is an internal error whose details go to the log only.
func (g *Gateway) asError(err error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		return ge
	}
	var de *game.Error
	if errors.As(err, &de) {
		if kc, ok := kindCodes[de.Kind]; ok {
			return fail(kc.status, kc.code, de.Message)
		}
	}
	g.log.Error("player gateway request failed", "err", err)
	return fail(http.StatusInternalServerError, CodeInternal, "The service could not complete the request; try again later")
}

// writeError answers err as a typed JSON error.
func (g *Gateway) writeError(w http.ResponseWriter, err error) {
	e := g.asError(err)
	if e.Status == http.StatusTooManyRequests && e.Code == CodeRateLimited {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Default().Debug("writing a player gateway answer", "err", err)
	}
}
