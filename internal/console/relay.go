package console

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
)

// Several nodes with fleet ownership (docs/several-nodes.md, "Relays"): a
// form that changes a fleet another node owns (terminate a game session,
// deregister a compute) is relayed to that node's console, which serves
// it as if the browser had come to it: the session cookie and the CSRF
// token are checked again (both are derived from the signed-in key, which
// every node has), and its answer (a redirect, or an error page) goes
// back to the browser unchanged. Pages, which only read, are served where
// they arrive.

// Relayer carries a request to another node's API listener: cluster.Client.
type Relayer interface {
	RelayAPI(w http.ResponseWriter, r *http.Request, body []byte, base string) error
}

// SetRelay makes the console relay the forms about fleets another node
// owns, as router says, with relay; a nil router serves them here.
func (c *Console) SetRelay(router cluster.Router, relay Relayer) { c.relaying.Set(router, relay) }

// maxFormBytes caps a form's body: the console's forms are a few fields.
const maxFormBytes = 64 << 10

type bodyKey struct{}

// keepBody reads a form's body, so that it can be both parsed and relayed.
func keepBody(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
	if err != nil {
		http.Error(w, "the form is too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return r.WithContext(context.WithValue(r.Context(), bodyKey{}, b)), true
}

// route answers *cluster.RelayTo when another node owns fleetID (an id
// or ARN) and r was not relayed here already, and nil to serve it here.
func (c *Console) route(r *http.Request, fleetID string) error {
	if fleetID == "" {
		return nil
	}
	return c.relaying.Route(r.Context(), game.ResourceID(fleetID, "fleet"))
}

// sessionFleet is the fleet a game session's ARN names, or "".
func sessionFleet(id string) string {
	f, _, _ := game.ParseGameSessionARN(id)
	return f
}

// elsewhere answers a form whose fleet another node serves
// (cluster.Destination): it goes to that node once; otherwise the answer
// is an error page asking to try again. It reports whether err was such a
// form's.
func (c *Console) elsewhere(w http.ResponseWriter, r *http.Request, err error) bool {
	base, ok := cluster.Destination(r.Context(), err)
	if !ok {
		return false
	}
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if relay, on := c.relaying.Relay(); base != "" && on {
		err := relay.RelayAPI(w, r, body, base)
		if err == nil {
			return true
		}
		c.cfg.Log.Warn("relaying a console form to its fleet's owner failed", "path", r.URL.Path, "node", base, "err", err)
	}
	w.Header().Set("Retry-After", "1")
	c.fail(w, r, http.StatusInternalServerError, "The node serving this fleet cannot be reached or is changing. Try again shortly.")
	return true
}
