package cluster

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/anylift/anylift/internal/store"
)

// What the front doors (the API, the player gateway, the console) share
// to send a request to the node owning its fleet: each finds the fleet in
// what it decoded and asks Route; when the store refuses a write as
// another node's, Destination names that node; the front door relays the
// request there once, and otherwise answers "retry" in its own words.

// RelayTo is the "error" of a request whose fleet another node owns: Base
// is that node's forwarding address.
type RelayTo struct{ Base string }

func (e *RelayTo) Error() string { return "owned by the node at " + e.Base }

// Route answers *RelayTo when rt says another node owns fleetID and ctx is
// not that of a request relayed here already, and nil to serve it here.
func Route(ctx context.Context, rt Router, fleetID string) error {
	if rt == nil || fleetID == "" || IsRelayed(ctx) {
		return nil
	}
	if base, local := rt.Route(fleetID); !local && base != "" {
		return &RelayTo{base}
	}
	return nil
}

// Destination says where a request goes whose serving ended in err: to
// the node a *RelayTo names, or to the one the store's refusal names
// (*store.NotOwner: nothing was written), unless ctx is that of a request
// relayed here already. ok reports whether err was either; base is "" when
// the request can go nowhere now (no owner at the moment, or relayed
// once), and the caller answers that the client should retry.
func Destination(ctx context.Context, err error) (base string, ok bool) {
	var to *RelayTo
	var no *store.NotOwner
	switch {
	case errors.As(err, &to):
		return to.Base, true
	case errors.As(err, &no):
		if IsRelayed(ctx) {
			return "", true
		}
		return no.Address, true
	}
	return "", false
}

// Relaying is what a front door relays with: a router and the client that
// carries its requests (R). The zero value relays nothing.
type Relaying[R any] struct{ p atomic.Pointer[relaying[R]] }

type relaying[R any] struct {
	router Router
	relay  R
}

// Set makes the front door relay with router and relay; a nil router
// serves everything here.
func (r *Relaying[R]) Set(router Router, relay R) {
	if router == nil {
		r.p.Store(nil)
		return
	}
	r.p.Store(&relaying[R]{router: router, relay: relay})
}

// On reports whether requests are relayed at all.
func (r *Relaying[R]) On() bool { return r.p.Load() != nil }

// Route is Route with the front door's router.
func (r *Relaying[R]) Route(ctx context.Context, fleetID string) error {
	p := r.p.Load()
	if p == nil {
		return nil
	}
	return Route(ctx, p.router, fleetID)
}

// Relay is the client that carries requests, when relaying is on.
func (r *Relaying[R]) Relay() (R, bool) {
	p := r.p.Load()
	if p == nil {
		var zero R
		return zero, false
	}
	return p.relay, true
}
