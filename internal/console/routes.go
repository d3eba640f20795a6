package console

import (
	"context"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

func (c *Console) routes() {
	m := c.mux
	m.Handle("GET /console/static/", http.StripPrefix("/console/", http.FileServerFS(staticFS)))
	m.HandleFunc("GET /console/signin", c.signinPage)
	m.HandleFunc("POST /console/signin", c.signin)
	// Each page needs what the API calls showing or doing the same need,
	// on the same resources.
	auth := func(pattern string, fn http.HandlerFunc, needs ...right) { m.Handle(pattern, c.signedIn(fn, needs...)) }
	auth("POST /console/signout", c.signout)
	auth("GET /console", redirectTo("/console/fleets"))
	auth("GET /console/{$}", redirectTo("/console/fleets"))
	auth("GET /console/fleets", c.fleets, right{"DescribeFleetAttributes", anyResource})
	auth("GET /console/fleets/{id}", c.fleet, right{"DescribeFleetAttributes", fleetInPath}, right{"DescribeFleetEvents", fleetInPath})
	auth("GET /console/fleets/{id}/metrics.json", c.fleetMetrics, right{"DescribeFleetUtilization", fleetInPath})
	auth("GET /console/fleets/{id}/computes", c.computes, right{"ListCompute", fleetInPath})
	auth("POST /console/fleets/{id}/computes/deregister", c.deregister, right{"DeregisterCompute", fleetInPath})
	auth("GET /console/fleets/{id}/sessions", c.sessions, right{"DescribeGameSessions", fleetInPath})
	auth("GET /console/session", c.session, right{"DescribeGameSessions", sessionInQuery}, right{"DescribePlayerSessions", sessionInQuery})
	auth("POST /console/session/terminate", c.terminate, right{"TerminateGameSession", sessionInForm})
	auth("GET /console/locations", c.locations, right{"ListLocations", anyResource})
	auth("GET /console/queues", c.queues, right{"DescribeGameSessionQueues", anyResource})
	auth("GET /console/queues/{name}", c.queue, right{"DescribeGameSessionQueues", queueInPath}, right{"DescribeGameSessionPlacement", anyResource})
	auth("GET /console/queues/{name}/metrics.json", c.queueMetrics, right{"DescribeGameSessionQueues", queueInPath})
	auth("GET /console/placements", c.placements, right{"DescribeGameSessionPlacement", anyResource})
	auth("GET /console/placement", c.placement, right{"DescribeGameSessionPlacement", anyResource})
	auth("POST /console/placement/stop", c.stopPlacement, right{"StopGameSessionPlacement", anyResource})
	auth("/console/", func(w http.ResponseWriter, r *http.Request) { c.notFound(w, r, "The page "+r.URL.Path) })
}

func redirectTo(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, path, http.StatusSeeOther) }
}

// readTimeout bounds a page's store reads: a console under load answers
// late or with an error, and never holds anything the API waits on.
const readTimeout = 5 * time.Second

// read runs fn in a read transaction bounded by readTimeout.
func (c *Console) read(r *http.Request, fn func(store.Tx) error) error {
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	return c.cfg.Store.View(ctx, fn)
}

// readFailed answers a failed read: 404 for a missing record, else 500
// (the cause is logged, not shown).
func (c *Console) readFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	if game.IsKind(err, game.NotFound) {
		c.notFound(w, r, what)
		return
	}
	c.cfg.Log.Error("console read", "path", r.URL.Path, "err", err)
	c.fail(w, r, http.StatusInternalServerError, "The store could not be read. Try again shortly.")
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if c.sessionOf(r) != nil || c.cfg.AnyCredentials {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "signin", "Sign in", signinData{Next: safeNext(r.URL.Query().Get("next"))})
}

type signinData struct {
	Next, KeyID, Error string
}

// signin checks a key pair against the API's credentials. The secret is
// never written back to the page.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	if err := c.cop.Check(r); err != nil {
		c.fail(w, r, http.StatusForbidden, "Cross-origin request refused.")
		return
	}
	keyID, secret := r.PostFormValue("access_key_id"), r.PostFormValue("secret_access_key")
	next := safeNext(r.PostFormValue("next"))
	if !c.cfg.AnyCredentials && !credentialsOK(c.cfg.Keys, keyID, secret) {
		c.cfg.Log.Info("console sign-in refused", "access_key_id", keyID)
		c.render(w, r, http.StatusUnauthorized, "signin", "Sign in",
			signinData{Next: next, KeyID: keyID, Error: "Unknown access key id or wrong secret key."})
		return
	}
	c.setSession(w, r, keyID)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/console", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}
