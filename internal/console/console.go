// Package console is the web console on the admin listener: fleets with
// their metric graphs and events, locations, computes and their server
// processes, game sessions and their player sessions. Pages are rendered
// on the server with html/template (which escapes everything players and
// game servers can name) and refresh their live parts by fetching the same
// page as an HTML fragment every few seconds; graphs are drawn in the
// browser from a small JSON endpoint. Assets are embedded: there is no
// front-end build.
//
// Other areas add their pages with AddPage (they appear in the navigation)
// and render inside the console's layout with Render.
package console

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/computes"
	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/metrics"
	"github.com/anylift/anylift/internal/queueing"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the console needs.
type Config struct {
	Store     store.Store
	Service   *control.Service
	Sessions  *sessions.Service
	Computes  *computes.Service
	Queues    *queueing.Service
	Snapshots *metrics.Snapshots
	// Keys are the API's access keys, accepted at sign-in with their
	// rights; AnyCredentials opens the console without sign-in
	// (development).
	Keys           Keys
	AnyCredentials bool
	Now            func() time.Time
	Log            *slog.Logger
}

// Page is a console page added by another area: a navigation entry at
// Path (under /console/) served by Handler, behind sign-in.
type Page struct {
	Path    string
	Title   string
	Handler http.Handler
	// Action, when set, is the GameLift action ("DescribeFleetEvents") a
	// key's policy must allow on "*" to see the page.
	Action string
}

// Console serves /console/.
type Console struct {
	cfg    Config
	signer *signer
	cop    *http.CrossOriginProtection
	pages  map[string]*template.Template
	mux    *http.ServeMux

	mu  sync.RWMutex // guards nav
	nav []Page

	// relaying sends the forms about other nodes' fleets to them; nil
	// serves them here (relay.go).
	relaying cluster.Relaying[Relayer]
}

// New returns the console; it starts nothing.
func New(cfg Config) *Console {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, signer: newSigner(cfg.Keys, cfg.AnyCredentials), cop: http.NewCrossOriginProtection(),
		pages: parseTemplates(), mux: http.NewServeMux()}
	c.nav = []Page{{Path: "/console/fleets", Title: "Fleets"}, {Path: "/console/locations", Title: "Locations"},
		{Path: "/console/queues", Title: "Queues"}, {Path: "/console/placements", Title: "Placements"}}
	c.routes()
	return c
}

func (c *Console) now() time.Time { return c.cfg.Now().UTC() }

func parseTemplates() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return out
}

var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"metric": func(m map[string]float64, name string) string { return strconv.FormatFloat(m[name], 'f', -1, 64) },
	"pct":    func(v float64) string { return strings.TrimSuffix(strings.TrimRight(strconvF(v), "0"), ".") + "%" },
}

// AddPage adds a page and its navigation entry. Call it before serving.
func (c *Console) AddPage(p Page) {
	c.mu.Lock()
	c.nav = append(c.nav, p)
	c.mu.Unlock()
	var needs []right
	if p.Action != "" {
		needs = []right{{p.Action, anyResource}}
	}
	c.mux.Handle(p.Path, c.signedIn(p.Handler, needs...))
	c.mux.Handle(strings.TrimSuffix(p.Path, "/")+"/", c.signedIn(p.Handler, needs...))
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	if r.Method == http.MethodPost {
		var ok bool
		if r, ok = keepBody(w, r); !ok {
			return
		}
	}
	c.mux.ServeHTTP(w, r)
}

// ctxKey carries the session in a request's context.
type ctxKey struct{}

// signedIn lets through requests with a session (one is made at once in
// development mode) whose key has the rights needs names; others go to
// the sign-in page, or get 401 when they are the page's background
// fetches, or 403 when the key lacks a right. POSTs must come from the
// console's origin and carry the session's CSRF token.
func (c *Console) signedIn(h http.Handler, needs ...right) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess := c.sessionOf(r)
		if sess == nil && c.cfg.AnyCredentials {
			sess = c.setSession(w, r, "dev")
		}
		if sess == nil {
			if r.Method == http.MethodGet && !isFetch(r) {
				http.Redirect(w, r, "/console/signin?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := c.cop.Check(r); err != nil {
				c.fail(w, r, http.StatusForbidden, "Cross-origin request refused.")
				return
			}
			if !c.signer.checkCSRF(sess, r.PostFormValue("csrf")) {
				c.fail(w, r, http.StatusForbidden, "The form's security token is missing or stale. Reload the page and try again.")
				return
			}
		}
		if msg := c.refused(r, sess, needs); msg != "" {
			c.cfg.Log.Info("console access denied", "path", r.URL.Path, "access_key_id", sess.KeyID)
			c.fail(w, r, http.StatusForbidden, msg)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, sess)))
	})
}

// isFetch reports a background fetch of the console's script.
func isFetch(r *http.Request) bool {
	return r.Header.Get("X-Console-Fetch") != "" || r.URL.Query().Get("fragment") != ""
}

// CSRFToken returns the token a form on a page served to r must carry as
// its "csrf" field.
func (c *Console) CSRFToken(r *http.Request) string {
	sess, _ := r.Context().Value(ctxKey{}).(*session)
	if sess == nil {
		return ""
	}
	return c.signer.csrf(sess)
}
