package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Several nodes with fleet ownership: a request about a fleet that another
// node owns is relayed to that node, which answers it (docs/several-nodes.md,
// "Relays"). The entry node checks the signature and counts the key's rate;
// the owner checks the signature again and the key's rights, and serves it.

// Relayer carries a request to another node: cluster.Client.
type Relayer interface {
	// RelayAPI sends r, whose body was read into body, to the node at
	// base and writes that node's answer to w; an error means nothing
	// was written.
	RelayAPI(w http.ResponseWriter, r *http.Request, body []byte, base string) error
	// Ask sends r as RelayAPI does and returns the answer instead of
	// writing it.
	Ask(ctx context.Context, r *http.Request, body []byte, base string) (*cluster.Answer, error)
}

// SetRouter sets what tells which node owns a fleet: nil (the default)
// serves every request here. It takes effect only with Options.Relay.
func (h *Handler) SetRouter(r cluster.Router) {
	if r == nil {
		h.router.Store(nil)
		return
	}
	h.router.Store(&r)
}

// routerFor is the router for r: nil when there is none, when nothing can
// be relayed, or when r was relayed here already (it is never relayed
// again).
func (h *Handler) routerFor(r *http.Request) cluster.Router {
	rt := h.router.Load()
	if rt == nil || h.relay == nil || cluster.IsRelayed(r.Context()) {
		return nil
	}
	return *rt
}

// owner answers *cluster.RelayTo for an operation's input whose one fleet
// another node owns, and nil to serve it here.
func (h *Handler) owner(ctx context.Context, rt cluster.Router, in any) error {
	return cluster.Route(ctx, rt, h.fleetOf(ctx, in))
}

// fleetOf is the one fleet an operation's input names: by id or ARN, by a
// game session's ARN, by a fleet ARN (tagging), or through a SIMPLE alias.
// It is "" when the input names none, several, or one it cannot tell
// without serving the call (a game session id that is not an ARN, an
// unknown or TERMINAL alias, an alias beside a fleet): those are served
// here.
func (h *Handler) fleetOf(ctx context.Context, in any) string {
	rn, ok := in.(wire.ResourceNamer)
	if !ok {
		return ""
	}
	var fleet, alias string
	unclear := false
	note := func(f string) {
		unclear = unclear || fleet != "" && fleet != f
		fleet = f
	}
	rn.Resources(func(typ, id string) {
		switch typ {
		case "fleet":
			note(game.ResourceID(id, "fleet"))
		case "gamesession":
			if f, _, ok := game.ParseGameSessionARN(id); ok {
				note(f)
			} else {
				unclear = true
			}
		case "arn":
			if t, rest, ok := resourceOf(id); ok && t == "fleet" {
				note(rest)
			}
		case "alias":
			unclear = unclear || alias != "" && alias != id
			alias = id
		}
	})
	switch {
	case unclear, fleet != "" && alias != "":
		return ""
	case alias != "":
		out, err := h.svc.ResolveAlias(ctx, &wire.ResolveAliasInput{AliasId: &alias})
		if err != nil || out.FleetId == nil {
			return ""
		}
		return *out.FleetId
	}
	return fleet
}

// elsewhere answers a request whose fleet another node serves
// (cluster.Destination): named by the router, or by the store, which
// refused the write (*store.NotOwner, nothing written). The request goes
// to that node once; a request relayed here already, a fleet with no
// owner at the moment or an owner that cannot be reached is answered 500,
// which clients retry. It reports whether err was one of those, and the
// code to count ("" when the owner answered: the owner counts it).
func (h *Handler) elsewhere(w http.ResponseWriter, r *http.Request, p wire.Protocol, op, reqID string, body []byte, err error) (code string, ok bool) {
	base, ok := cluster.Destination(r.Context(), err)
	if !ok {
		return "", false
	}
	if base == "" {
		h.log.Info("a request met a fleet without an owner it can be sent to", "op", op, "request_id", reqID, "err", err)
	}
	if base != "" && h.relay != nil {
		err := h.relay.RelayAPI(w, r, body, base)
		if err == nil {
			return "", true
		}
		h.log.Warn("relaying a request to its fleet's owner failed", "op", op, "request_id", reqID, "node", base, "err", err)
	}
	var no *store.NotOwner
	if errors.As(err, &no) && no.Address != "" && cluster.IsRelayed(r.Context()) {
		// Relayed here on an entry's old view of the leases: the store
		// names the owner, to which the entry sends the request once
		// more (nothing was written here).
		w.Header().Set(cluster.OwnerHeader, no.Address)
	}
	// 500, not 503: this node is well, one fleet has no reachable owner
	// for a moment (until another node takes it over). A load balancer
	// that takes a node out on 503 (as the nginx configuration of
	// docs/several-nodes.md does) must not take this one out for it, and
	// the AWS SDKs retry an InternalServiceException all the same.
	ae := &authError{"InternalServiceException", http.StatusInternalServerError,
		"This node cannot serve the fleet now: the node owning it cannot be reached or is changing; retry."}
	h.writeUnavailable(w, p, reqID, ae)
	return ae.code, true
}
