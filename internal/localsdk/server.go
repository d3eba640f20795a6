package localsdk

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anylift/anylift/sdk/server"
)

// How long a long poll waits by default, and at most.
const (
	defaultWait = 20 * time.Second
	maxWait     = 60 * time.Second
	// keepAlive is the interval of comment lines on an idle event stream.
	keepAlive = 15 * time.Second
	maxBody   = 64 << 10
)

// Server serves the local SDK on a loopback address. Each Conn added gets
// a bearer token of its own, given only to the process it was added for;
// a request carrying no known token is refused, as is one from another
// address than the loopback.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	ctx    context.Context // ends at Close: long polls and streams return
	cancel context.CancelFunc
	served chan struct{}
	log    *slog.Logger

	mu      sync.Mutex
	conns   map[[sha256.Size]byte]*Conn
	closing sync.WaitGroup // Conns being closed after Remove
}

// Listen opens addr, which must be on the loopback interface
// ("127.0.0.1:0"), and serves the local SDK on it until Close.
func Listen(addr string, log *slog.Logger) (*Server, error) {
	if err := CheckAddress(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{ln: ln, served: make(chan struct{}), log: log, conns: map[[sha256.Size]byte]*Conn{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.served)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// CheckAddress reports whether addr is a host:port on the loopback
// interface, as the local SDK must be.
func CheckAddress(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("local SDK address %q: %w", addr, err)
	}
	if !isLoopback(host) {
		return fmt.Errorf("local SDK address %q: must be on the loopback interface (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the address processes are given: http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Add serves c and returns the token its process must present.
func (s *Server) Add(c *Conn) string {
	var b [32]byte
	rand.Read(b[:])
	token := base64.RawURLEncoding.EncodeToString(b[:])
	s.mu.Lock()
	s.conns[sha256.Sum256([]byte(token))] = c
	s.mu.Unlock()
	return token
}

// Remove stops serving token's Conn and closes it in the background
// (Close waits for it): a process that ended loses its endpoint.
func (s *Server) Remove(token string) {
	key := sha256.Sum256([]byte(token))
	s.mu.Lock()
	c := s.conns[key]
	delete(s.conns, key)
	if c != nil {
		s.closing.Add(1)
	}
	s.mu.Unlock()
	if c != nil {
		go func() {
			defer s.closing.Done()
			c.Close()
		}()
	}
}

// Close stops serving, ends the waits for events, closes every Conn still
// served and waits for all of it.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.served
	s.mu.Lock()
	conns := s.conns
	s.conns = map[[sha256.Size]byte]*Conn{}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	s.closing.Wait()
	return err
}

// conn is the Conn the request's token names; nil when none does or the
// caller is not on the loopback interface.
func (s *Server) conn(r *http.Request) *Conn {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || !isLoopback(host) {
		return nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil
	}
	key := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[key]
}

// action is one endpoint: it reads its request from r and returns the
// result to write as JSON (nil: {}).
type action func(c *Conn, r *http.Request) (any, error)

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	for pattern, a := range actions {
		mux.Handle(pattern, s.authed(func(c *Conn, w http.ResponseWriter, r *http.Request) {
			res, err := a(c, r)
			if err != nil {
				writeError(w, err)
				return
			}
			if res == nil {
				res = struct{}{}
			}
			writeJSON(w, http.StatusOK, res)
		}))
	}
	mux.Handle("GET /v1/events", s.authed(s.events))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, Error{Code: "NOT_FOUND", Message: "no such local SDK action: " + r.Method + " " + r.URL.Path})
	})
	return mux
}

func (s *Server) authed(h func(*Conn, http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := s.conn(r)
		if c == nil {
			writeJSON(w, http.StatusUnauthorized, Error{Code: "UNAUTHORIZED",
				Message: "missing or unknown token: send the process's " + EnvToken + " as Authorization: Bearer <token>"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(c, w, r)
	})
}

// actions are the endpoints answered with one JSON object.
var actions = map[string]action{
	"POST /v1/ready": func(c *Conn, r *http.Request) (any, error) {
		var in ReadyRequest
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return nil, c.Ready(in.Port, in.LogPaths)
	},
	"POST /v1/health": func(c *Conn, r *http.Request) (any, error) {
		in := HealthRequest{Healthy: true}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		c.SetHealth(in.Healthy)
		return nil, nil
	},
	"GET /v1/process": func(c *Conn, r *http.Request) (any, error) { return c.State(), nil },
	"POST /v1/activate": func(c *Conn, r *http.Request) (any, error) {
		return nil, c.ActivateGameSession()
	},
	"POST /v1/player-sessions/accept": func(c *Conn, r *http.Request) (any, error) {
		var in PlayerSessionRequest
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return nil, c.AcceptPlayerSession(in.PlayerSessionId)
	},
	"POST /v1/player-sessions/remove": func(c *Conn, r *http.Request) (any, error) {
		var in PlayerSessionRequest
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		return nil, c.RemovePlayerSession(in.PlayerSessionId)
	},
	"POST /v1/player-sessions/describe":       describePlayerSessions,
	"POST /v1/player-session-creation-policy": updatePolicy,
	"POST /v1/backfill/start":                 startBackfill,
	"POST /v1/backfill/stop":                  stopBackfill,
	"POST /v1/compute-certificate": func(c *Conn, r *http.Request) (any, error) {
		cert, err := c.GetComputeCertificate()
		if err != nil {
			return nil, err
		}
		return ComputeCertificateResult{CertificatePath: cert.CertificatePath, ComputeName: cert.ComputeName}, nil
	},
	"POST /v1/fleet-role-credentials": fleetRoleCredentials,
	"POST /v1/ending": func(c *Conn, r *http.Request) (any, error) {
		return nil, c.ProcessEnding()
	},
}

func describePlayerSessions(c *Conn, r *http.Request) (any, error) {
	var in DescribePlayerSessionsRequest
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	res, err := c.DescribePlayerSessions(server.DescribePlayerSessionsRequest{GameSessionID: in.GameSessionId,
		PlayerID: in.PlayerId, PlayerSessionID: in.PlayerSessionId, PlayerSessionStatusFilter: in.PlayerSessionStatusFilter,
		NextToken: in.NextToken, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	out := DescribePlayerSessionsResult{NextToken: res.NextToken, PlayerSessions: make([]PlayerSession, 0, len(res.PlayerSessions))}
	for _, p := range res.PlayerSessions {
		out.PlayerSessions = append(out.PlayerSessions, PlayerSession{PlayerSessionId: p.PlayerSessionID, PlayerId: p.PlayerID,
			GameSessionId: p.GameSessionID, FleetId: p.FleetID, PlayerData: p.PlayerData, IpAddress: p.IPAddress,
			DnsName: p.DNSName, Port: p.Port, CreationTime: p.CreationTime, TerminationTime: p.TerminationTime, Status: p.Status})
	}
	return out, nil
}

func updatePolicy(c *Conn, r *http.Request) (any, error) {
	var in PolicyRequest
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	return nil, c.UpdatePlayerSessionCreationPolicy(in.PlayerSessionCreationPolicy)
}

func startBackfill(c *Conn, r *http.Request) (any, error) {
	var in StartMatchBackfillRequest
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	req := server.StartMatchBackfillRequest{GameSessionArn: or(in.GameSessionArn, c.State().GameSessionId),
		MatchmakingConfigurationArn: in.MatchmakingConfigurationArn, TicketID: in.TicketId}
	for _, p := range in.Players {
		sp := server.Player{PlayerID: p.PlayerId, Team: p.Team, LatencyInMS: p.LatencyInMs, PlayerAttributes: map[string]server.AttributeValue{}}
		for k, v := range p.PlayerAttributes {
			sp.PlayerAttributes[k] = attribute(v)
		}
		req.Players = append(req.Players, sp)
	}
	res, err := c.StartMatchBackfill(req)
	if err != nil {
		return nil, err
	}
	return StartMatchBackfillResult{TicketId: res.TicketID}, nil
}

// attribute names the member of v that is set, as the SDK's AttrType.
func attribute(v AttributeValue) server.AttributeValue {
	switch {
	case v.S != nil:
		return server.AttributeValue{AttrType: "STRING", S: *v.S}
	case v.N != nil:
		return server.AttributeValue{AttrType: "DOUBLE", N: *v.N}
	case v.SL != nil:
		return server.AttributeValue{AttrType: "STRING_LIST", SL: v.SL}
	case v.SDM != nil:
		return server.AttributeValue{AttrType: "STRING_DOUBLE_MAP", SDM: v.SDM}
	}
	return server.AttributeValue{AttrType: "NONE"}
}

func stopBackfill(c *Conn, r *http.Request) (any, error) {
	var in StopMatchBackfillRequest
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	return nil, c.StopMatchBackfill(server.StopMatchBackfillRequest{GameSessionArn: or(in.GameSessionArn, c.State().GameSessionId),
		MatchmakingConfigurationArn: in.MatchmakingConfigurationArn, TicketID: in.TicketId})
}

func fleetRoleCredentials(c *Conn, r *http.Request) (any, error) {
	var in FleetRoleCredentialsRequest
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	res, err := c.GetFleetRoleCredentials(server.FleetRoleCredentialsRequest{RoleArn: in.RoleArn, RoleSessionName: in.RoleSessionName})
	if err != nil {
		return nil, err
	}
	return FleetRoleCredentialsResult{AssumedRoleUserArn: res.AssumedRoleUserArn, AssumedRoleId: res.AssumedRoleID,
		AccessKeyId: res.AccessKeyID, SecretAccessKey: res.SecretAccessKey, SessionToken: res.SessionToken,
		Expiration: res.Expiration}, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// events answers GET /v1/events: a long poll by default, a stream of
// Server-Sent Events when the client accepts text/event-stream.
func (s *Server) events(c *Conn, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := seq(or(q.Get("after"), r.Header.Get("Last-Event-ID")))
	if err != nil {
		writeError(w, err)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.stream(c, w, r, after)
		return
	}
	wait := defaultWait
	if v := q.Get("wait"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 {
			writeError(w, invalid("wait must be a number of seconds"))
			return
		}
		wait = min(time.Duration(secs*float64(time.Second)), maxWait)
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	evs, _ := c.Events(ctx, after)
	if evs == nil {
		evs = []Event{}
	}
	writeJSON(w, http.StatusOK, EventsResult{Events: evs})
}

// stream writes the events after after as Server-Sent Events until the
// client goes, the connection closes or the server stops.
func (s *Server) stream(c *Conn, w http.ResponseWriter, r *http.Request, after uint64) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	for {
		ctx, cancel := context.WithTimeout(r.Context(), keepAlive)
		evs, closed := c.Events(ctx, after)
		cancel()
		if r.Context().Err() != nil {
			return
		}
		if len(evs) == 0 && !closed {
			io.WriteString(w, ": keep-alive\n\n")
		}
		for _, e := range evs {
			b, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, b)
			after = e.Seq
		}
		if rc.Flush() != nil || closed {
			return
		}
	}
}

func seq(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, invalid("after must be the Seq of an event")
	}
	return n, nil
}

// decode reads the request body into v; an empty body leaves v as it is.
func decode(r *http.Request, v any) error {
	err := json.NewDecoder(r.Body).Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return invalid("the body is not the JSON object expected: %v", err)
}

func invalid(format string, args ...any) error {
	return &server.Error{Type: server.Validation, Message: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// errorCodes translate the SDK's error types: GameLift's names for them,
// and an HTTP status.
var errorCodes = map[server.ErrorType]struct {
	status int
	code   string
}{
	server.InternalService:       {http.StatusBadGateway, "INTERNAL_SERVICE_EXCEPTION"},
	server.BadRequest:            {http.StatusBadRequest, "BAD_REQUEST_EXCEPTION"},
	server.Unauthorized:          {http.StatusBadGateway, "UNAUTHORIZED"},
	server.Forbidden:             {http.StatusForbidden, "FORBIDDEN"},
	server.NotFound:              {http.StatusNotFound, "NOT_FOUND"},
	server.Conflict:              {http.StatusConflict, "CONFLICT"},
	server.TooManyRequests:       {http.StatusTooManyRequests, "TOO_MANY_REQUESTS"},
	server.Validation:            {http.StatusBadRequest, "VALIDATION_EXCEPTION"},
	server.ProcessNotReady:       {http.StatusConflict, "PROCESS_NOT_READY"},
	server.GameSessionIDNotSet:   {http.StatusConflict, "GAMESESSION_ID_NOT_SET"},
	server.TerminationTimeNotSet: {http.StatusConflict, "TERMINATION_TIME_NOT_SET"},
	server.AlreadyInitialized:    {http.StatusConflict, "ALREADY_INITIALIZED"},
	server.NotInitialized:        {http.StatusConflict, "NOT_INITIALIZED"},
	server.ServiceCallFailed:     {http.StatusGatewayTimeout, "SERVICE_CALL_FAILED"},
	server.LocalConnectionFailed: {http.StatusBadGateway, "LOCAL_CONNECTION_FAILED"},
}

func writeError(w http.ResponseWriter, err error) {
	var se *server.Error
	if !errors.As(err, &se) {
		se = &server.Error{Type: server.InternalService, Message: err.Error()}
	}
	ec, ok := errorCodes[se.Type]
	if !ok {
		ec = errorCodes[server.InternalService]
	}
	writeJSON(w, ec.status, Error{Code: ec.code, Message: se.Message})
}
