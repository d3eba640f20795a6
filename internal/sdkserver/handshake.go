package sdkserver

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/anylift/anylift/internal/game"
)

// parseHandshake reads the process's identity and credentials from the
// upgrade request's query. The SDKs differ (Go percent-encodes and sorts,
// C++ and C# send raw values in their own order), so each member is
// unescaped when it is validly escaped and taken as sent otherwise, and
// keys are matched exactly, else regardless of case.
func parseHandshake(r *http.Request) (*Handshake, error) {
	q := lenientQuery(r.URL.RawQuery)
	get := func(key string) string { return member(q, key) }
	h := &Handshake{
		Process:          Process{FleetID: get("FleetId"), ComputeID: get("ComputeId"), PID: get("pID")},
		AuthToken:        get("Authorization"),
		SDKVersion:       get("sdkVersion"),
		SDKLanguage:      get("sdkLanguage"),
		IdempotencyToken: get("IdempotencyToken"),
		Query:            q,
		RemoteAddr:       r.RemoteAddr,
		Endpoint:         endpointOf(r),
	}
	switch {
	case h.PID == "":
		return nil, errors.New("handshake without pID")
	case h.FleetID == "":
		return nil, errors.New("handshake without FleetId")
	case h.ComputeID == "":
		return nil, errors.New("handshake without ComputeId")
	case h.AuthToken == "":
		return nil, errors.New("handshake without Authorization")
	}
	return h, nil
}

// member is the value of key in q: matched exactly, else regardless of
// case; "" when absent.
func member(q url.Values, key string) string {
	if v, ok := q[key]; ok {
		return v[0]
	}
	for k, v := range q {
		if strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// HandshakeFleet is the fleet id an upgrade request's query names (its
// FleetId, read as the handshake reads it, an ARN reduced to its id), or
// "" when it names none. Nothing else is checked: a node relaying the
// connection to the fleet's owner leaves the rest to it.
func HandshakeFleet(r *http.Request) string {
	return game.ResourceID(member(lenientQuery(r.URL.RawQuery), "FleetId"), "fleet")
}

// lenientQuery splits a raw query on '&' and each member on its first
// '='; a key or value that does not unescape is kept as sent.
func lenientQuery(raw string) url.Values {
	q := url.Values{}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		q.Add(unescape(k), unescape(v))
	}
	return q
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// headerHas reports whether the comma-separated header key holds token,
// regardless of case.
func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// endpointOf is the ws:// or wss:// URL r was sent to.
func endpointOf(r *http.Request) string {
	if !validHost(r.Host) {
		return ""
	}
	scheme := "ws://"
	if r.TLS != nil {
		scheme = "wss://"
	}
	return scheme + r.Host
}

// validHost reports whether h is a host name or IP address with an
// optional port, and nothing else: it becomes part of a URL sent back.
func validHost(h string) bool {
	if h == "" || len(h) > 261 {
		return false
	}
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		if strings.HasPrefix(h, "[") {
			return strings.Contains(hp, ":") && net.ParseIP(hp) != nil // [IPv6]:port
		}
		host = hp
	}
	if host == "" {
		return false
	}
	for _, c := range []byte(host) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
