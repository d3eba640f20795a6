// Package api is the control plane's HTTP front door: it recognises the
// protocol of each request (AWS JSON 1.1 or Smithy RPC v2 CBOR), verifies
// its SigV4 signature, decodes and validates the input against the model,
// calls the operation, and answers in the request's protocol. Errors are
// translated to the wire here, and only here (errors.go).
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/flexmatch"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/processes"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/wire"
)

// MaxBodyBytes caps a request body. The largest inputs of the operations
// served (GameSessionData, 262144 characters) fit with room to spare.
const MaxBodyBytes = 2 << 20

const (
	jsonTargetPrefix = "GameLift."
	cborPathPrefix   = "/service/GameLift/operation/"
)

// handler runs one operation on a raw body and returns its output shape.
// check, when not nil, is asked whether the decoded and validated input
// may go on here (a key limited by a policy; a fleet another node owns).
type handler func(ctx context.Context, p wire.Protocol, body []byte, check func(in any) error) (any, error)

// Observer hears about every finished API request (for metrics).
type Observer func(op string, code string, elapsed time.Duration)

// Handler serves the GameLift API.
type Handler struct {
	ops      map[string]handler
	svc      *control.Service
	ps       *processes.Service
	verifier *Verifier
	log      *slog.Logger
	observe  Observer
	newID    func() string
	unauth   *budget
	limiter  *access.Limiter
	account  game.Account
	// relay and router send requests about fleets other nodes own to
	// them (relay.go); nil: everything is served here.
	relay  Relayer
	router atomic.Pointer[cluster.Router]
	// peers lists the other live nodes, for Anylift's own operations
	// that every node answers in part (gather.go).
	peers atomic.Pointer[func(context.Context) ([]string, error)]
}

// Options configure a Handler.
type Options struct {
	Verifier *Verifier
	Log      *slog.Logger
	Observe  Observer
	// UnauthenticatedBytes caps the body bytes held, across requests,
	// before their signature is checked (DefaultUnauthenticatedBytes
	// when zero).
	UnauthenticatedBytes int64
	// Limiter limits each key's requests once their signature is
	// verified (nil: no limit).
	Limiter *access.Limiter
	// Relay carries requests to the node owning their fleet, once a
	// router is set (SetRouter), and those the store refuses as owned by
	// another node (nil: none are).
	Relay Relayer
}

// New returns the API handler over svc, with the game session and player
// session operations served by ss, the queue and placement operations by
// qs, the FlexMatch operations by fm, and the
// container fleet, container group definition and scaling operations by
// cs, the compute operations by cp, and the agents' reports by ps.
func New(svc *control.Service, ss *sessions.Service, qs *queueing.Service, fm *flexmatch.Service, cs *containers.Service, cp *computes.Service, ps *processes.Service, o Options) *Handler {
	h := &Handler{ops: operations(svc, ss, qs, fm, cs, cp), svc: svc, ps: ps, verifier: o.Verifier, log: o.Log, observe: o.Observe, newID: game.NewUUID,
		unauth: &budget{max: o.UnauthenticatedBytes}, limiter: o.Limiter, account: svc.Config().Account, relay: o.Relay}
	if h.unauth.max <= 0 {
		h.unauth.max = DefaultUnauthenticatedBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.verifier == nil {
		h.verifier = &Verifier{}
	}
	return h
}

// Operations returns the names of the operations served.
func (h *Handler) Operations() []string {
	out := make([]string, 0, len(h.ops))
	for name := range h.ops {
		out = append(out, name)
	}
	return out
}

// Match reports whether r is a control-plane request this handler serves.
func Match(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	return (r.URL.Path == "/" && r.Header.Get("X-Amz-Target") != "") || strings.HasPrefix(r.URL.Path, cborPathPrefix)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := h.newID()
	p, op, err := route(r)
	code := "OK"
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("panic in operation", "op", op, "request_id", reqID, "panic", fmt.Sprint(v))
			code = "InternalServiceException"
			h.writeError(w, p, reqID, exceptions[game.Internal], "An internal error occurred. Request ID: "+reqID)
		}
		if h.observe != nil && op != "" && code != "" { // "": relayed, counted by the node that served it
			h.observe(op, code, time.Since(start))
		}
	}()
	if err != nil {
		code = err.code
		h.writeError(w, p, reqID, exception{err.code, err.status}, err.message)
		return
	}
	out, body, err2 := h.serve(w, r, p, op, reqID)
	if err2 != nil {
		if c, ok := h.elsewhere(w, r, p, op, reqID, body, err2); ok {
			code = c
			return
		}
		var ae *authError
		if errors.As(err2, &ae) {
			code = ae.code
			h.writeError(w, p, reqID, exception{ae.code, ae.status}, ae.message)
			return
		}
		ex := modeledFor(op, exceptionFor(err2))
		code = ex.code
		msg := err2.Error()
		if ex.code == "InternalServiceException" {
			h.logFailure(r, op, reqID, err2)
			msg = "An internal error occurred. Request ID: " + reqID
		}
		h.writeError(w, p, reqID, ex, msg)
		return
	}
	buf := outputs.Get().(*[]byte)
	body, encErr := wire.AppendEncode((*buf)[:0], p, out)
	if encErr != nil {
		outputs.Put(buf)
		h.log.Error("encoding output", "op", op, "request_id", reqID, "err", encErr)
		code = "InternalServiceException"
		h.writeError(w, p, reqID, exceptions[game.Internal], "An internal error occurred. Request ID: "+reqID)
		return
	}
	h.writeHeaders(w, p, reqID)
	// With its length declared, a large answer goes out as it is rather
	// than in chunks: one write to the connection fewer.
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	// The server no longer holds body once Write returns: it is kept for
	// the next answer, unless large.
	if cap(body) <= maxPooledOutput {
		*buf = body
		outputs.Put(buf)
	}
}

// outputs are buffers answers are encoded into, reused: a page of 20
// sessions is some 14 KB.
var outputs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledOutput = 256 << 10

// logFailure logs an operation that failed inside the service: an error,
// unless the caller went away before the answer (its connection closed,
// so the request's context was canceled), which is the caller's doing
// and logged as information.
func (h *Handler) logFailure(r *http.Request, op, reqID string, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		h.log.Info("caller went away", "op", op, "request_id", reqID, "err", err)
		return
	}
	h.log.Error("operation failed", "op", op, "request_id", reqID, "err", err)
}

// serve authenticates, decodes and runs the operation; it returns the
// body read with the outcome, for a request to relay.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, p wire.Protocol, op, reqID string) (any, []byte, error) {
	signed, body, err := h.readBody(w, r, MaxBodyBytes)
	if err != nil {
		// The body was not read in full, and is not kept: the connection
		// closes after the answer (readBody discarded, within bounds, a
		// body it refused before reading).
		w.Header().Set("Connection", "close")
		var ae *authError
		if errors.As(err, &ae) {
			if ae.status == http.StatusServiceUnavailable {
				h.log.Warn("request refused", "op", op, "request_id", reqID, "reason", ae.message)
			} else {
				h.log.Info("authentication failed", "op", op, "request_id", reqID, "code", ae.code)
			}
		}
		return nil, nil, err
	}
	if ae := h.admit(r, signed); ae != nil {
		return nil, nil, ae
	}
	run, ok := h.ops[op]
	if !ok {
		if _, modeled := wire.OperationErrors[op]; modeled {
			return nil, nil, game.Errorf(game.InvalidRequest, "operation %s is not supported by this service", op)
		}
		return nil, nil, &authError{"UnknownOperationException", http.StatusBadRequest, "unknown operation " + op}
	}
	// check, when not nil, vets the decoded input: the key's rights when
	// a policy limits it, then whether another node owns its fleet.
	var check func(any) error
	limited := signed.key != nil && signed.key.Policy != nil
	rt := h.routerFor(r)
	if limited || rt != nil {
		check = func(in any) error {
			if limited {
				if ae := h.authorize(signed, op, in); ae != nil {
					h.log.Info("access denied", "op", op, "request_id", reqID, "access_key_id", signed.accessKey)
					return ae
				}
			}
			if rt != nil {
				return h.owner(r.Context(), rt, in)
			}
			return nil
		}
	}
	out, err := run(r.Context(), p, body, check)
	return out, body, err
}

// routeError is a request that cannot be routed to an operation.
type routeError struct {
	code, message string
	status        int
}

// route finds the protocol and operation of r and checks its content type.
func route(r *http.Request) (wire.Protocol, string, *routeError) {
	if strings.HasPrefix(r.URL.Path, cborPathPrefix) {
		op := strings.TrimPrefix(r.URL.Path, cborPathPrefix)
		if ct := mediaType(r.Header.Get("Content-Type")); ct != "" && ct != wire.ContentTypeCBOR {
			return wire.CBOR, op, &routeError{"InvalidRequestException", "Content-Type must be application/cbor, not " + ct, http.StatusBadRequest}
		}
		return wire.CBOR, op, nil
	}
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, jsonTargetPrefix)
	if !ok {
		return wire.JSON, "", &routeError{"UnknownOperationException", "X-Amz-Target must be GameLift.<Operation>, not " + target, http.StatusBadRequest}
	}
	if ct := mediaType(r.Header.Get("Content-Type")); ct != "" && ct != wire.ContentTypeJSON && ct != "application/json" {
		return wire.JSON, op, &routeError{"InvalidRequestException", "Content-Type must be application/x-amz-json-1.1, not " + ct, http.StatusBadRequest}
	}
	return wire.JSON, op, nil
}

func mediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

func (h *Handler) writeHeaders(w http.ResponseWriter, p wire.Protocol, reqID string) {
	hd := w.Header()
	if p == wire.CBOR {
		hd["Content-Type"] = cborContentType
		hd["Smithy-Protocol"] = smithyProtocol
	} else {
		hd["Content-Type"] = jsonContentType
	}
	hd.Set("X-Amzn-Requestid", reqID)
}

// Header values every answer has, shared: each holds one value and has no
// room for another, so adding a value to a header makes a new slice.
var (
	jsonContentType = []string{wire.ContentTypeJSON}[:1:1]
	cborContentType = []string{wire.ContentTypeCBOR}[:1:1]
	smithyProtocol  = []string{"rpc-v2-cbor"}[:1:1]
)

// MaxErrorMessage caps an error's message, in bytes: no request, however
// large or wrong, makes a large answer.
const MaxErrorMessage = 8 << 10

func (h *Handler) writeError(w http.ResponseWriter, p wire.Protocol, reqID string, ex exception, message string) {
	if len(message) > MaxErrorMessage {
		message = strings.ToValidUTF8(message[:MaxErrorMessage-3], "") + "..."
	}
	h.writeHeaders(w, p, reqID)
	w.Header().Set("X-Amzn-Errortype", ex.code)
	w.WriteHeader(ex.status)
	w.Write(wire.EncodeError(p, ex.code, message))
}

// op adapts an operation method to a handler: decode, normalize (the few
// inputs that accept another spelling of an enum value), validate, check
// (when the key has a policy, its rights over the resources the input
// names; with a router, the node owning the input's fleet), call.
func op[In any, Out any](fn func(context.Context, *In) (*Out, error)) handler {
	return opIn(func(ctx context.Context, in *In, _ wire.Protocol) (*Out, error) { return fn(ctx, in) })
}

// opIn is op for an operation that answers in the caller's protocol
// already (its output holds lists already encoded, wire.EncodedList).
func opIn[In any, Out any](fn func(context.Context, *In, wire.Protocol) (*Out, error)) handler {
	return func(ctx context.Context, p wire.Protocol, body []byte, check func(any) error) (any, error) {
		in := new(In)
		if err := wire.Decode(p, body, in); err != nil {
			return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
		}
		if n, ok := any(in).(interface{ Normalize() }); ok {
			n.Normalize()
		}
		if v, ok := any(in).(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
			}
		}
		if check != nil {
			if err := check(in); err != nil {
				return nil, err
			}
		}
		out, err := fn(ctx, in, p)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// What a refused request's remaining body may take before its answer: a
// client that writes its whole body before reading the answer (most do)
// gets it, and a slow or hostile one holds the connection no longer.
const (
	lingerBytes   = 2*MaxBodyBytes + 1<<20
	lingerTimeout = 2 * time.Second
)

// linger discards what is left of r's body, up to lingerBytes and for at
// most lingerTimeout.
func linger(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(lingerTimeout)) != nil {
		return
	}
	io.CopyN(io.Discard, r.Body, lingerBytes) // the connection closes after the answer
}
