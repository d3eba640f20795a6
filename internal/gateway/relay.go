package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// Several nodes with fleet ownership (docs/several-nodes.md, "Relays"): a
// player's request that writes a game session of a fleet another node
// owns (a create on a fleet or alias, a join, a rejoin, a leave) is
// relayed to that node's gateway, which serves it as if the player had
// come to it: it checks the player's token again (every node has the
// same configuration) and holds the session's seat lock, so the joins of
// one session are serialised on one node whichever node they reached.
// The entry counts the player's rate; the owner does not count a relayed
// request again. Searches, and creates on a queue (a placement is any
// node's), are served where they arrive.

// Relayer carries a player's request to another node: cluster.Client.
type Relayer interface {
	// RelayPlayer sends r, whose body was read into body, to the node
	// at base and writes that node's answer to w; an error means
	// nothing was written.
	RelayPlayer(w http.ResponseWriter, r *http.Request, body []byte, base string, timeout time.Duration) error
}

// SetRelay makes the gateway relay requests about fleets another node
// owns, as router says, with relay; a nil router serves every request
// here.
func (g *Gateway) SetRelay(router cluster.Router, relay Relayer) { g.relaying.Set(router, relay) }

// routeSession routes by the fleet a game session's ARN names; an id
// that is not an ARN is served here (the store's refusal relays it).
func (g *Gateway) routeSession(ctx context.Context, id string) error {
	fleetID, _, _ := game.ParseGameSessionARN(id)
	return g.relaying.Route(ctx, fleetID)
}

// routeAlias routes by the fleet a SIMPLE alias points to; an alias
// that cannot be resolved is served here, which answers its error.
func (g *Gateway) routeAlias(ctx context.Context, aliasID string) error {
	if !g.relaying.On() || cluster.IsRelayed(ctx) {
		return nil
	}
	out, err := g.ctl.ResolveAlias(ctx, &wire.ResolveAliasInput{AliasId: wire.String(aliasID)})
	if err != nil {
		return nil
	}
	return g.relaying.Route(ctx, wire.Deref(out.FleetId))
}

// elsewhere answers a request whose fleet another node serves
// (cluster.Destination): it goes to that node once. A request that can go
// nowhere now (relayed here already, a fleet with no owner at the moment)
// and an owner that cannot be reached are answered 500 with Retry-After,
// which clients retry (not 503, which a balancer may hold against this
// node). It reports whether err was such a request's.
func (g *Gateway) elsewhere(w http.ResponseWriter, r *http.Request, body []byte, err error) bool {
	base, ok := cluster.Destination(r.Context(), err)
	if !ok {
		return false
	}
	if relay, on := g.relaying.Relay(); base != "" && on {
		err := relay.RelayPlayer(w, r, body, base, g.cfg.CreateTimeout+30*time.Second)
		if err == nil {
			return true
		}
		g.log.Warn("relaying a player request to its fleet's owner failed", "path", r.URL.Path, "node", base, "err", err)
	}
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusInternalServerError, fail(http.StatusInternalServerError, CodeUnavailable,
		"The node serving this game session's fleet cannot be reached or is changing; retry shortly"))
	return true
}

// counted reports whether the player's rate is to be counted for r: not
// for a request relayed from another node, which counted it.
func counted(r *http.Request) bool { return !cluster.IsRelayed(r.Context()) }
