package gateway

import "net/http"

// cors sets the CORS answer headers when the request's Origin is allowed,
// and reports whether it was. Credentials are bearer tokens set by the
// game's code, never cookies, so Allow-Credentials is not sent.
func (g *Gateway) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || !allowed(g.cfg.CORSOrigins, origin) {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, "+DevPlayerHeader)
	h.Set("Access-Control-Max-Age", "600")
	return true
}
