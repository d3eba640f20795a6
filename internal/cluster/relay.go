package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
)

// Router says which node owns a fleet.
type Router interface {
	// Route returns the forwarding base URL (http://host:port of its
	// --node-listen) of the node owning fleetID, and whether that is this node.
	// A fleet with no known owner, or ownership off, is ("", true): served here.
	Route(fleetID string) (base string, local bool)
}

// Relays: a call about a fleet that another node owns reaches that node
// over the internal listener. The node the client reached (the entry)
// sends it on, the owner serves it with its ordinary handlers as if the
// client had come to it, and the entry passes the owner's answer back
// unchanged. A relayed request is never relayed again.
const (
	// APIPath takes a request to the API listener (the control plane, an
	// agent's report, Anylift's own operations, a console form): POST,
	// signed over its body, which is the original request's envelope
	// (encodeAPI).
	APIPath = "/node/v1/api"
	// PlayerPath takes a request to the player gateway, in the same
	// envelope.
	PlayerPath = "/node/v1/player"
	// ProcessPath takes a process's WebSocket upgrade: GET, signed over
	// its path and query (processQuery), with the process's own
	// WebSocket headers.
	ProcessPath = "/node/v1/process"
)

// answeredHeader marks an answer given by the owner's handler, as opposed
// to a refusal of the relay itself (a signature refused, a node that
// knows no relay path): the entry passes on the first and answers 503 for
// the second. The entry removes it.
const answeredHeader = "X-Anylift-Relay-Answer"

// Bounds of the relay paths.
const (
	// MaxRelayBytes caps a relayed API request's envelope: the body (at
	// most 2 MiB, the API's own cap) and what it carries beside.
	MaxRelayBytes = 4 << 20
	// maxMeta caps what an envelope carries beside the body: the request
	// line and headers, which the entry's listener capped already.
	maxMeta = 1 << 20
	// unverifiedRelayBytes caps the envelope bytes held, across requests,
	// before their signature is checked.
	unverifiedRelayBytes = 64 << 20
	// RelayTimeout bounds a relayed API call, from the connection to the
	// owner to the end of its answer; shorter than the API listener's
	// write timeout, so the entry can still answer 503.
	RelayTimeout = 60 * time.Second
	// maxAskedAnswer caps the answer read back by Ask.
	maxAskedAnswer = 32 << 20
	// HandshakeTimeout bounds a relayed process upgrade up to the owner's
	// answer (the owner checks the process's token in its store).
	HandshakeTimeout = 10 * time.Second
	// maxRefusalBody caps the body of a refused upgrade passed back.
	maxRefusalBody = 64 << 10
)

type relayedKey struct{}

// IsRelayed reports whether ctx is that of a request relayed from another
// node: it is served here, whoever owns its fleet, and its key's rate was
// counted at the entry.
func IsRelayed(ctx context.Context) bool { return ctx.Value(relayedKey{}) != nil }

// apiMeta is what a relayed API request carries beside its body: what the
// owner needs to rebuild the request, check its SigV4 signature again and
// log it.
type apiMeta struct {
	URI           string      `json:"URI"` // the request target as the client sent it
	Host          string      `json:"Host"`
	Header        http.Header `json:"Header"`
	ContentLength int64       `json:"ContentLength"` // -1: it came chunked
	RemoteAddr    string      `json:"RemoteAddr"`
}

// encodeAPI is the body of a relayed API request: the length of the
// metadata (4 bytes, big-endian), the metadata as JSON, then the
// original body.
func encodeAPI(m *apiMeta, body []byte) ([]byte, error) {
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(meta) > maxMeta {
		return nil, fmt.Errorf("request headers of %d bytes are too large to relay", len(meta))
	}
	out := make([]byte, 4, 4+len(meta)+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	return append(out, body...), nil
}

// decodeAPI splits a relayed API request's body into its metadata and the
// original body, checking what the owner relies on.
func decodeAPI(b []byte) (*apiMeta, []byte, error) {
	if len(b) < 4 {
		return nil, nil, errors.New("envelope too short")
	}
	n := binary.BigEndian.Uint32(b)
	if n > maxMeta || uint64(n) > uint64(len(b)-4) {
		return nil, nil, errors.New("envelope metadata length out of range")
	}
	var m apiMeta
	if err := json.Unmarshal(b[4:4+n], &m); err != nil {
		return nil, nil, fmt.Errorf("envelope metadata: %w", err)
	}
	body := b[4+n:]
	switch {
	case m.URI == "" || m.URI[0] != '/':
		return nil, nil, errors.New("envelope without a request path")
	case m.ContentLength != -1 && m.ContentLength != int64(len(body)):
		return nil, nil, errors.New("envelope body length differs from its Content-Length")
	}
	if _, err := url.ParseRequestURI(m.URI); err != nil {
		return nil, nil, errors.New("envelope request path does not parse")
	}
	if m.Header == nil {
		m.Header = http.Header{}
	}
	return &m, body, nil
}

// processMeta is what a relayed upgrade carries in its query.
type processMeta struct {
	Path, Query, Host, RemoteAddr string
	TLS                           bool // the process came to the entry over TLS
}

func (m *processMeta) query() string {
	q := url.Values{"path": {m.Path}, "query": {m.Query}, "host": {m.Host}, "remote": {m.RemoteAddr}}
	if m.TLS {
		q.Set("tls", "1")
	}
	return q.Encode()
}

func parseProcessQuery(raw string) (*processMeta, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errors.New("relay query does not parse")
	}
	for k, v := range q {
		if len(v) != 1 {
			return nil, fmt.Errorf("relay query repeats %q", k)
		}
	}
	m := &processMeta{Path: q.Get("path"), Query: q.Get("query"), Host: q.Get("host"), RemoteAddr: q.Get("remote"),
		TLS: q.Get("tls") == "1"}
	if m.Path == "" || m.Path[0] != '/' {
		return nil, errors.New("relay query without a path")
	}
	return m, nil
}

// Relays are the handlers that serve relayed requests on the owner: the
// API listener's (the control-plane API and the other POSTs relayed to
// it), the player gateway and the process endpoint, as they serve clients
// that come to the node directly. A nil handler leaves its path unserved
// (404).
type Relays struct {
	API     http.Handler
	Player  http.Handler
	Process http.Handler
}

// mount adds the relay paths to mux.
func (rs Relays) mount(mux *http.ServeMux, v *Verifier, log *slog.Logger) {
	unverified := semaphore.NewWeighted(unverifiedRelayBytes)
	for path, h := range map[string]http.Handler{APIPath: rs.API, PlayerPath: rs.Player} {
		if h != nil {
			mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
				serveEnvelope(w, r, h, v, unverified, log)
			})
		}
	}
	if rs.Process != nil {
		mux.HandleFunc("GET "+ProcessPath, func(w http.ResponseWriter, r *http.Request) {
			rs.serveProcess(w, r, v, log)
		})
	}
}

// serveEnvelope rebuilds the request a relayed envelope carries and
// serves it with h.
func serveEnvelope(w http.ResponseWriter, r *http.Request, h http.Handler, v *Verifier, unverified *semaphore.Weighted, log *slog.Logger) {
	if _, err := v.CheckHeaders(r); err != nil { // before reading a body
		refuse(w, r, err, log)
		return
	}
	if r.ContentLength < 0 || r.ContentLength > MaxRelayBytes {
		w.Header().Set("Connection", "close")
		http.Error(w, "relayed request without a length, or too large", http.StatusRequestEntityTooLarge)
		return
	}
	if !unverified.TryAcquire(r.ContentLength) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many relayed bytes in flight", http.StatusServiceUnavailable)
		return
	}
	b := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, b)
	unverified.Release(r.ContentLength)
	if err != nil {
		http.Error(w, "could not read the relayed request", http.StatusBadRequest)
		return
	}
	if err := v.Verify(r, b); err != nil {
		refuse(w, r, err, log)
		return
	}
	m, body, err := decodeAPI(b)
	if err != nil {
		http.Error(w, "bad relayed request: "+err.Error(), http.StatusBadRequest)
		return
	}
	u, _ := url.ParseRequestURI(m.URI) // checked by decodeAPI
	in := &http.Request{
		Method: http.MethodPost, URL: u, RequestURI: m.URI, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: m.Header, Host: m.Host, RemoteAddr: m.RemoteAddr,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: m.ContentLength,
	}
	in = in.WithContext(context.WithValue(r.Context(), relayedKey{}, true))
	w.Header().Set(answeredHeader, "1")
	h.ServeHTTP(w, in)
}

func (rs Relays) serveProcess(w http.ResponseWriter, r *http.Request, v *Verifier, log *slog.Logger) {
	if err := v.Verify(r, nil); err != nil {
		refuse(w, r, err, log)
		return
	}
	m, err := parseProcessQuery(r.URL.RawQuery)
	if err != nil {
		log.Warn("refused a relayed process connection", "remote", r.RemoteAddr, "reason", err)
		http.Error(w, "bad relayed connection: "+err.Error(), http.StatusBadRequest)
		return
	}
	in := r.Clone(context.WithValue(r.Context(), relayedKey{}, true))
	in.URL = &url.URL{Path: m.Path, RawQuery: m.Query}
	in.RequestURI = in.URL.RequestURI()
	in.Host, in.RemoteAddr, in.TLS = m.Host, m.RemoteAddr, nil
	if m.TLS {
		in.TLS = &tls.ConnectionState{HandshakeComplete: true}
	}
	for _, h := range []string{HeaderTime, HeaderNonce, HeaderSignature} {
		in.Header.Del(h)
	}
	w.Header().Set(answeredHeader, "1")
	rs.Process.ServeHTTP(w, in)
}

// ErrNotAnswered is the error of a relay the other node refused or could
// not take (another secret, a node without relays): nothing was written.
var ErrNotAnswered = errors.New("the node did not take the relayed request")

// relayClient is the HTTP client of relayed calls: many at once to one
// owner, kept alive between calls. Each call bounds itself (its context).
// A redirect is an answer to pass back (the console's forms answer 303),
// never one to follow.
func relayClient(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	return &http.Client{Transport: &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: 256,
		MaxConnsPerHost:     512, // the owner caps each address at 1024 connections by default
		IdleConnTimeout:     60 * time.Second,
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// RelayAPI sends the request r to the API listener, whose body was read
// into body, to the node at base and writes that node's answer to w
// unchanged (status, headers, body). An error means nothing was written:
// the caller answers. ErrPeerDown is returned without trying for a node
// that could not be reached moments ago.
func (c *Client) RelayAPI(w http.ResponseWriter, r *http.Request, body []byte, base string) error {
	return c.relayEnvelope(w, r, body, base, APIPath, RelayTimeout)
}

// RelayPlayer is RelayAPI for a request to the player gateway, which may
// wait up to timeout for its answer (a create waits for its session).
func (c *Client) RelayPlayer(w http.ResponseWriter, r *http.Request, body []byte, base string, timeout time.Duration) error {
	return c.relayEnvelope(w, r, body, base, PlayerPath, timeout)
}

func (c *Client) relayEnvelope(w http.ResponseWriter, r *http.Request, body []byte, base, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	resp, err := c.sendEnvelope(ctx, r, body, base, path)
	if err != nil {
		return err
	}
	if owner := resp.Header.Get(OwnerHeader); owner != "" && owner != base && owner != c.self &&
		resp.StatusCode == http.StatusInternalServerError {
		// The node this one took for the owner has handed the fleet on,
		// wrote nothing, and names the owner: the request goes there,
		// once. (Named this node, which sent it away: its answer stands.)
		resp.Body.Close()
		if resp, err = c.sendEnvelope(ctx, r, body, owner, path); err != nil {
			return err
		}
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header, false)
	w.WriteHeader(entryStatus(resp.StatusCode))
	io.Copy(w, resp.Body) // a failure here cuts the answer, as it would on the owner
	return nil
}

// Answer is another node's answer to a request asked of it (Ask).
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Ask sends the request r to the API listener, whose body was read into
// body, to the node at base, as RelayAPI does, and returns that node's
// answer instead of writing it: for a request every node answers in part
// (what each holds in memory). The answer's body is read up to 32 MiB.
func (c *Client) Ask(ctx context.Context, r *http.Request, body []byte, base string) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, RelayTimeout)
	defer cancel()
	resp, err := c.sendEnvelope(ctx, r, body, base, APIPath)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAskedAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAskedAnswer {
		return nil, fmt.Errorf("the answer of node %s is larger than %d bytes", base, maxAskedAnswer)
	}
	h := http.Header{}
	copyHeader(h, resp.Header, false)
	return &Answer{Status: resp.StatusCode, Header: h, Body: b}, nil
}

// sendEnvelope posts r's envelope to path on the node at base and returns
// the answer of that node's handler; the caller closes its body. Any
// other answer (a refused signature, an unknown path) is ErrNotAnswered.
func (c *Client) sendEnvelope(ctx context.Context, r *http.Request, body []byte, base, path string) (*http.Response, error) {
	if c.skip(base) {
		return nil, ErrPeerDown
	}
	cl := r.ContentLength
	if cl != -1 {
		cl = int64(len(body))
	}
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	env, err := encodeAPI(&apiMeta{URI: uri, Host: r.Host, Header: r.Header, ContentLength: cl, RemoteAddr: r.RemoteAddr}, body)
	if err != nil {
		return nil, err
	}
	req, err := c.signedPost(ctx, base+path, "application/octet-stream", env)
	if err != nil {
		return nil, err
	}
	resp, err := c.relay.Do(req)
	if err != nil {
		c.mark(base, !isDial(err))
		return nil, unwrapURL(err)
	}
	c.mark(base, true)
	if resp.Header.Get(answeredHeader) == "" {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%w: %d %s", ErrNotAnswered, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return resp, nil
}

// entryStatus is the status the entry answers for the owner's: the same,
// but 500 for 503. A 503 tells a load balancer that the node it reached
// cannot serve (the nginx configuration of docs/several-nodes.md takes
// such a node out of rotation), while here only the owner of one fleet
// refused (it drains, cannot reach its database, or is full); clients
// retry a 500 all the same.
func entryStatus(code int) int {
	if code == http.StatusServiceUnavailable {
		return http.StatusInternalServerError
	}
	return code
}

// OwnerHeader, on a node's refusal of a process connection relayed to it
// for a fleet it does not own, is the forwarding address of the node that
// does, as the store says: the entry relays the connection there once
// more. The entry removes it.
const OwnerHeader = "X-Anylift-Fleet-Owner"

// Refusal is a node's refusal of a process connection relayed to it,
// which the entry passes back to the process (Write) unless it relays the
// connection to the Owner the refusal names.
type Refusal struct {
	Status int
	Header http.Header // the relay's own headers left out
	Body   []byte
	// Owner is the forwarding address of the fleet's owner when the node
	// refused because it is not the owner, else "".
	Owner string
}

// maxReason caps the reason a Refusal gives for a log line.
const maxReason = 200

// Reason is the first line of the refusal's body, the refusing node's own
// words (never the process's query).
func (f *Refusal) Reason() string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(f.Body)), "\n")
	if len(line) > maxReason {
		line = line[:maxReason]
	}
	return line
}

// Write passes the refusal back to the process: the same, but 500 for
// 503 (entryStatus).
func (f *Refusal) Write(w http.ResponseWriter) {
	for k, v := range f.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(entryStatus(f.Status))
	w.Write(f.Body)
}

// RelayProcess relays the process WebSocket upgrade r to the node at
// base: it opens a signed upgrade to that node's ProcessPath carrying r's
// path, query, Host, remote address and whether r came over TLS, with r's
// WebSocket headers; and after a 101 copies bytes both ways until either
// side closes or ctx ends. A refusal by that node is returned, unwritten:
// the caller passes it back or relays the connection to the owner the
// refusal names. An error means nothing was written: the caller answers.
func (c *Client) RelayProcess(ctx context.Context, w http.ResponseWriter, r *http.Request, base string) (*Refusal, error) {
	if c.skip(base) {
		return nil, ErrPeerDown
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("bad node address %q", base)
	}
	m := &processMeta{Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host, RemoteAddr: r.RemoteAddr, TLS: r.TLS != nil}
	if m.Path == "" {
		m.Path = "/"
	}
	out := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: u.Host, Path: ProcessPath, RawQuery: m.query()},
		Host: u.Host, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	copyHeader(out.Header, r.Header, false)
	out.Header.Set("Connection", "Upgrade")
	out.Header.Set("Upgrade", "websocket")
	sign(out, c.secret, c.now(), nil)

	d := net.Dialer{Timeout: c.timeout}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	c.mark(base, err == nil || errors.Is(ctx.Err(), context.Canceled))
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(HandshakeTimeout))
	br := bufio.NewReader(conn)
	resp, err := roundTrip(conn, br, out)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.Header.Get(answeredHeader) == "" {
		conn.Close()
		return nil, fmt.Errorf("%w: %d", ErrNotAnswered, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
		f := &Refusal{Status: resp.StatusCode, Header: http.Header{}, Body: body, Owner: resp.Header.Get(OwnerHeader)}
		copyHeader(f.Header, resp.Header, false)
		f.Header.Del("Content-Length") // the body may have been cut
		return f, nil
	}
	client, cbuf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	pipe(ctx, client, cbuf, conn, br, resp)
	return nil, nil
}

// roundTrip writes req on conn and reads the answer's head.
func roundTrip(conn net.Conn, br *bufio.Reader, req *http.Request) (*http.Response, error) {
	if err := req.Write(conn); err != nil {
		return nil, err
	}
	return http.ReadResponse(br, req)
}

// pipe writes the owner's 101 to the process, then copies bytes both ways
// (what either side sent early included) until one side ends or ctx does;
// then it closes both.
func pipe(ctx context.Context, client net.Conn, cbuf *bufio.ReadWriter, owner net.Conn, obuf *bufio.Reader, resp *http.Response) {
	defer client.Close()
	defer owner.Close()
	h := http.Header{}
	copyHeader(h, resp.Header, true)
	resp.Header, resp.Body = h, nil
	if resp.Write(cbuf) != nil || cbuf.Flush() != nil {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		client.Close()
		owner.Close()
	})
	defer stop()
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(owner, cbuf.Reader)
		done <- struct{}{}
	}()
	go func() {
		io.Copy(client, obuf)
		done <- struct{}{}
	}()
	<-done
	client.Close()
	owner.Close()
	<-done
}

// hopHeaders belong to one connection and are not passed on, except the
// upgrade's own when upgrading.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyHeader copies from into to, leaving out the relay's own headers
// and, unless upgrading, the headers of one connection.
func copyHeader(to, from http.Header, upgrading bool) {
	for k, v := range from {
		to[k] = append([]string(nil), v...)
	}
	for _, h := range []string{answeredHeader, OwnerHeader, HeaderTime, HeaderNonce, HeaderSignature} {
		to.Del(h)
	}
	if !upgrading {
		for _, h := range hopHeaders {
			to.Del(h)
		}
	}
}

// isDial reports whether err happened connecting, so the node at the
// other end did not take the request.
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// unwrapURL drops the URL an *url.Error names: relay paths carry nothing
// secret in theirs, but errors are logged, and short ones read better.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
