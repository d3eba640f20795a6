package server

import (
	"crypto/rand"
	"fmt"
)

// ErrorType classifies an SDK error. Service answers map by StatusCode as
// in GameLift's SDKs: 400 BadRequest, 401 Unauthorized, 403 Forbidden,
// 404 NotFound, 409 Conflict, 429 TooManyRequests, other 4xx BadRequest,
// anything else InternalService.
type ErrorType int

const (
	InternalService       ErrorType = iota // the service failed
	BadRequest                             // the service refused the request
	Unauthorized                           //
	Forbidden                              // e.g. a game session of another process
	NotFound                               //
	Conflict                               //
	TooManyRequests                        //
	Validation                             // refused locally before sending
	ProcessNotReady                        // the call needs a successful ProcessReady
	GameSessionIDNotSet                    // no CreateGameSession received yet
	TerminationTimeNotSet                  // no TerminateProcess received
	AlreadyInitialized                     // Init or ProcessReady called twice
	NotInitialized                         // no InitSDK
	ServiceCallFailed                      // no answer within the request timeout
	LocalConnectionFailed                  // could not connect to the WebSocket URL
)

var typeNames = [...]string{"internal service", "bad request", "unauthorized", "forbidden", "not found",
	"conflict", "too many requests", "validation", "process not ready", "game session id not set",
	"termination time not set", "already initialized", "not initialized", "service call failed",
	"local connection failed"}

func (t ErrorType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("error type %d", int(t))
}

// Error is every error this package returns. errors.Is(err, &Error{Type: t})
// matches any Error of type t.
type Error struct {
	Type    ErrorType
	Message string
}

func (e *Error) Error() string { return e.Type.String() + ": " + e.Message }

// Is matches an *Error of the same type whose Message is empty or equal.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Type == e.Type && (t.Message == "" || t.Message == e.Message)
}

func errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

// errorForStatus maps an answer's StatusCode to an error type.
func errorForStatus(status int, message string) *Error {
	t := InternalService
	switch {
	case status == 400:
		t = BadRequest
	case status == 401:
		t = Unauthorized
	case status == 403:
		t = Forbidden
	case status == 404:
		t = NotFound
	case status == 409:
		t = Conflict
	case status == 429:
		t = TooManyRequests
	case status > 400 && status < 500:
		t = BadRequest
	}
	return &Error{Type: t, Message: message}
}

// newID returns a random UUID (version 4).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
