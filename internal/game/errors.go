package game

import (
	"errors"
	"fmt"
)

// Kind is the closed set of ways an operation can fail. Each kind is
// translated to exactly one GameLift exception by the API layer.
type Kind int

const (
	Internal Kind = iota // a fault of ours; the caller sees no details
	InvalidRequest
	NotFound
	Conflict
	InvalidFleetStatus
	InvalidGameSessionStatus
	FleetCapacityExceeded
	GameSessionFull
	IdempotentParameterMismatch
	LimitExceeded
	TerminalRoutingStrategy
	NotReady
	Unauthorized
	UnsupportedRegion
	TaggingFailed
)

// Error is a failure with a kind and a message fit for the caller.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error of kind k.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// KindOf reports the kind of err: the kind of the first *Error in its chain,
// or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
