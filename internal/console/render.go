package console

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// view is what the layout and every page template see.
type view struct {
	Title string
	Nav   []Page
	Path  string
	CSRF  string
	User  string
	Dev   bool
	Data  any
	Body  template.HTML // Render's pre-rendered content
}

func (c *Console) view(r *http.Request, title string, data any) *view {
	c.mu.RLock()
	nav := append([]Page(nil), c.nav...)
	c.mu.RUnlock()
	v := &view{Title: title, Nav: nav, Path: r.URL.Path, CSRF: c.CSRFToken(r), Dev: c.cfg.AnyCredentials, Data: data}
	if sess, _ := r.Context().Value(ctxKey{}).(*session); sess != nil {
		v.User = sess.KeyID
	}
	return v
}

// render executes page name (its "live" block alone for a fragment
// request) into a buffer first, so a template error is a clean 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	t := c.pages[name]
	entry := "layout.html"
	if r.URL.Query().Get("fragment") != "" && t.Lookup("live") != nil {
		entry = "live"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, entry, c.view(r, title, data)); err != nil {
		c.cfg.Log.Error("console template", "page", name, "err", err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail answers an error page (404 for what does not exist).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", http.StatusText(status), struct {
		Status  int
		Message string
	}{status, msg})
}

// notFound is the console's 404 page.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request, what string) {
	c.fail(w, r, http.StatusNotFound, what+" does not exist.")
}

// Render writes a page of another area inside the console's layout; body
// must be html/template output (escaped).
func (c *Console) Render(w http.ResponseWriter, r *http.Request, title string, body template.HTML) {
	c.render(w, r, http.StatusOK, "external", title, body)
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func strconvF(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// safeNext keeps a post-sign-in redirect inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/fleets"
	}
	return next
}
