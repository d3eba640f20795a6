package api

import (
	"net/http"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// exception is how one error kind appears on the wire.
type exception struct {
	code   string
	status int
}

// exceptions is the one table from error kinds to GameLift exceptions.
// Every exception is a modeled shape
// so both botocore and the Go SDK raise their typed classes. Only
// InternalServiceException is a 500: clients retry 500s with backoff.
var exceptions = map[game.Kind]exception{
	game.Internal:                    {"InternalServiceException", http.StatusInternalServerError},
	game.InvalidRequest:              {"InvalidRequestException", http.StatusBadRequest},
	game.NotFound:                    {"NotFoundException", http.StatusBadRequest},
	game.Conflict:                    {"ConflictException", http.StatusBadRequest},
	game.InvalidFleetStatus:          {"InvalidFleetStatusException", http.StatusBadRequest},
	game.InvalidGameSessionStatus:    {"InvalidGameSessionStatusException", http.StatusBadRequest},
	game.FleetCapacityExceeded:       {"FleetCapacityExceededException", http.StatusBadRequest},
	game.GameSessionFull:             {"GameSessionFullException", http.StatusBadRequest},
	game.IdempotentParameterMismatch: {"IdempotentParameterMismatchException", http.StatusBadRequest},
	game.LimitExceeded:               {"LimitExceededException", http.StatusBadRequest},
	game.TerminalRoutingStrategy:     {"TerminalRoutingStrategyException", http.StatusBadRequest},
	game.NotReady:                    {"NotReadyException", http.StatusBadRequest},
	game.Unauthorized:                {"UnauthorizedException", http.StatusBadRequest},
	game.UnsupportedRegion:           {"UnsupportedRegionException", http.StatusBadRequest},
	game.TaggingFailed:               {"TaggingFailedException", http.StatusBadRequest},
}

// exceptionFor returns the wire form of err's kind.
func exceptionFor(err error) exception {
	if e, ok := exceptions[game.KindOf(err)]; ok {
		return e
	}
	return exceptions[game.Internal]
}

// modeledFor keeps every answer a modeled error of its operation, so the
// AWS SDKs raise their typed exception classes: an exception the model does
// not list for op (NotFoundException from RegisterCompute, say) is sent as
// InvalidRequestException, which the message still explains.
func modeledFor(op string, ex exception) exception {
	listed, ok := wire.OperationErrors[op]
	if !ok || ex.status == http.StatusInternalServerError {
		return ex
	}
	for _, name := range listed {
		if name == ex.code {
			return ex
		}
	}
	for _, name := range listed {
		if name == "InvalidRequestException" {
			return exceptions[game.InvalidRequest]
		}
	}
	return ex
}

// Unavailable answers r, a request Match accepts, with status 503 and
// InternalServiceException in r's protocol: this node cannot serve now
// (its store is unreachable), and clients retry a 503 by themselves.
func (h *Handler) Unavailable(w http.ResponseWriter, r *http.Request, message string) {
	p, _, _ := route(r)
	h.writeUnavailable(w, p, h.newID(), unavailable(message))
}

// writeUnavailable answers ae, a 503, with Retry-After.
func (h *Handler) writeUnavailable(w http.ResponseWriter, p wire.Protocol, reqID string, ae *authError) {
	w.Header().Set("Retry-After", "1")
	h.writeError(w, p, reqID, exception{ae.code, ae.status}, ae.message)
}
