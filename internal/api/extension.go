package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// ExtensionPattern is the route of Anylift's own operations (extapi).
const ExtensionPattern = "POST " + extapi.Path + "{op}"

// extensionBodyBytes caps the body of Anylift's own operations.
const extensionBodyBytes = 64 << 10

// ServeExtension serves Anylift's own operations, which GameLift does not
// have (extapi: fault injection, the status view), with h's verifier: a
// signed POST of a JSON object to extapi.Path + the operation's name. It
// answers 200 with the operation's output, or a JSON error {"__type",
// "message"} as the API words errors; an unknown operation is
// UnknownOperationException (404).
func (h *Handler) ServeExtension(w http.ResponseWriter, r *http.Request) {
	reqID := h.newID()
	op := strings.TrimPrefix(r.URL.Path, extapi.Path)
	fail := func(ex exception, msg string) { h.writeError(w, wire.JSON, reqID, ex, msg) }
	signed, body, err := h.readBody(w, r, extensionBodyBytes)
	if err == nil {
		if ae := h.admit(r, signed); ae != nil {
			err = ae
		}
	}
	if err != nil {
		w.Header().Set("Connection", "close") // the body is not drained
		var ae *authError
		if errors.As(err, &ae) {
			fail(exception{ae.code, ae.status}, ae.message)
		} else {
			fail(exceptions[game.InvalidRequest], "could not read the request: "+err.Error())
		}
		return
	}
	// Anylift's own operations are granted as gamelift:<Operation>, on
	// the fleet they name ("*" when they name none). With fleet
	// ownership, one fleet's faults are its owner's, and the faults of
	// every fleet are every node's (gather.go).
	rt := h.routerFor(r)
	authorize := func(in any) error {
		if ae := h.authorize(signed, op, in); ae != nil {
			h.log.Info("access denied", "op", op, "request_id", reqID, "access_key_id", signed.accessKey)
			return ae
		}
		if rt == nil {
			return nil
		}
		if h.gathers(r.Context(), op, in) {
			return errGather
		}
		return h.owner(r.Context(), rt, in)
	}
	out, err := h.runExtension(r.Context(), op, body, authorize)
	if errors.Is(err, errGather) {
		out, err = h.gather(r, op, body)
	}
	if _, ok := h.elsewhere(w, r, wire.JSON, op, reqID, body, err); ok {
		return
	}
	var unknown *unknownOp
	switch {
	case errors.As(err, &unknown):
		fail(exception{"UnknownOperationException", http.StatusNotFound}, unknown.Error())
		return
	case errors.As(err, new(*authError)):
		ae := err.(*authError)
		fail(exception{ae.code, ae.status}, ae.message)
		return
	case err != nil:
		ex := exceptionFor(err)
		msg := err.Error()
		if ex.code == "InternalServiceException" {
			h.logFailure(r, op, reqID, err)
			msg = "An internal error occurred. Request ID: " + reqID
		}
		fail(ex, msg)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		h.log.Error("encoding output", "op", op, "request_id", reqID, "err", err)
		fail(exceptions[game.Internal], "An internal error occurred. Request ID: "+reqID)
		return
	}
	h.writeHeaders(w, wire.JSON, reqID)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

type unknownOp struct{ op string }

func (e *unknownOp) Error() string {
	return fmt.Sprintf("unknown operation %q: Anylift's own operations are %s, %s, %s and %s", e.op,
		extapi.OpInjectFault, extapi.OpListFaults, extapi.OpClearFaults, extapi.OpDescribeStatus)
}

// runExtension decodes body for op and runs it.
// authorize, asked with the decoded input, refuses what the signing key
// may not do.
func (h *Handler) runExtension(ctx context.Context, op string, body []byte, authorize func(in any) error) (any, error) {
	switch op {
	case extapi.OpInjectFault:
		return extensionCall(ctx, body, authorize, h.svc.InjectFault)
	case extapi.OpListFaults:
		return extensionCall(ctx, body, authorize, h.svc.ListFaults)
	case extapi.OpClearFaults:
		return extensionCall(ctx, body, authorize, h.svc.ClearFaults)
	case extapi.OpDescribeStatus:
		return extensionCall(ctx, body, authorize, h.svc.DescribeStatus)
	}
	return nil, &unknownOp{op}
}

func extensionCall[In, Out any](ctx context.Context, body []byte, authorize func(in any) error, fn func(context.Context, *In) (*Out, error)) (any, error) {
	in, err := DecodeExtension[In](body)
	if err != nil {
		return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
	}
	if err := authorize(in); err != nil {
		return nil, err
	}
	return fn(ctx, in)
}

// DecodeExtension parses the body of one of Anylift's own operations
// strictly: unknown members and trailing data are refused; an empty body
// is an empty object.
func DecodeExtension[In any](body []byte) (*In, error) {
	in := new(In)
	if len(bytes.TrimSpace(body)) == 0 {
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return nil, fmt.Errorf("the request is not a valid JSON object: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the request has data after its JSON object")
	}
	return in, nil
}
