package server

import (
	"context"
	"regexp"

	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/coder/websocket"
)

// state is what the Process learned from its calls and pushes; guarded by
// Process.mu.
type state struct {
	pp              ProcessParameters
	readied         bool // ProcessReady was called
	ready           bool // and succeeded, and ProcessEnding was not called
	gameSessionID   string
	terminationTime int64 // epoch seconds
	stopHealth      chan struct{}
	notify          *notifier // the session-notification style, when used
}

var (
	fleetIDPattern = regexp.MustCompile(`^[a-zA-Z0-9.-]{1,256}$`)
	hostIDPattern  = regexp.MustCompile(`^[a-zA-Z0-9\-]+(/[a-zA-Z0-9\-]+)?$`)
	psessPattern   = regexp.MustCompile(`^[a-zA-Z0-9.-]{1,256}$`)
)

// validate applies the checks GameLift's SDKs make before connecting.
func (sp ServerParameters) validate() error {
	switch {
	case sp.WebSocketURL == "":
		return errorf(Validation, "WebSocketURL is required")
	case sp.ProcessID == "":
		return errorf(Validation, "ProcessID is required")
	case sp.AuthToken == "":
		return errorf(Validation, "AuthToken is required")
	case !fleetIDPattern.MatchString(sp.FleetID):
		return errorf(Validation, "FleetID must be 1 to 256 letters, digits, '.' or '-'")
	case len(sp.HostID) > 256 || !hostIDPattern.MatchString(sp.HostID):
		return errorf(Validation, "HostID must be 1 to 256 letters, digits or '-', with at most one '/'")
	}
	return nil
}

// Init connects to the service as the process params describe, after
// applying the GAMELIFT_SDK_* environment variables (which win). It tries
// Options.ConnectAttempts times before giving up with LocalConnectionFailed.
// Nothing is sent until ProcessReady.
func Init(params ServerParameters, opts Options) (*Process, error) {
	opts.setDefaults()
	params = withEnvironment(params, opts.Getenv)
	if err := params.validate(); err != nil {
		return nil, err
	}
	p := &Process{params: params, opts: opts, endpoint: params.WebSocketURL, token: params.AuthToken,
		idem: newID(), connected: make(chan struct{}), pending: map[string]*call{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	c, err := p.dialRetrying(opts.ConnectAttempts)
	if err != nil {
		p.cancel()
		return nil, err
	}
	p.use(c)
	return p, nil
}

// ProcessReady tells the service the process can host a game session, and
// starts the health reports. It may be called once.
func (p *Process) ProcessReady(pp ProcessParameters) error {
	if pp.Port < 1 || pp.Port > 60000 {
		return errorf(Validation, "Port must be between 1 and 60000")
	}
	p.mu.Lock()
	if p.readied {
		p.mu.Unlock()
		return errorf(AlreadyInitialized, "ProcessReady was already called")
	}
	p.readied, p.pp = true, pp
	p.mu.Unlock()
	_, err := p.call(&sdkwire.ActivateServerProcess{
		SdkVersion: SdkVersion, SdkLanguage: SdkLanguage,
		SdkToolName: p.opts.Getenv(EnvToolName), SdkToolVersion: p.opts.Getenv(EnvToolVersion),
		Port: pp.Port, LogPaths: pp.LogParameters.LogPaths,
	}, p.opts.ActivateTimeout)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.readied = false
		return err
	}
	p.ready = true
	p.stopHealth = make(chan struct{})
	p.wg.Add(1)
	go p.healthLoop(p.stopHealth)
	return nil
}

// session returns the current game session id, or the local error that
// forbids calls about it.
func (p *Process) session() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ready {
		return "", errorf(ProcessNotReady, "call ProcessReady first")
	}
	if p.gameSessionID == "" {
		return "", errorf(GameSessionIDNotSet, "no game session was started on this process")
	}
	return p.gameSessionID, nil
}

// ActivateGameSession tells the service the game session started by
// OnStartGameSession is ready for players.
func (p *Process) ActivateGameSession() error {
	gs, err := p.session()
	if err != nil {
		return err
	}
	_, err = p.call(&sdkwire.ActivateGameSession{GameSessionId: gs}, p.opts.RequestTimeout)
	return err
}

// AcceptPlayerSession validates a joining player's player session id; the
// service refuses one not RESERVED in this process's game session.
func (p *Process) AcceptPlayerSession(playerSessionID string) error {
	if err := p.playerSessionCall(playerSessionID, true); err != nil {
		return err
	}
	p.playerJoined(playerSessionID)
	return nil
}

// RemovePlayerSession reports a player gone, freeing the seat. In the
// session-notification style with passive destroy on, removing the last
// player ends the game session.
func (p *Process) RemovePlayerSession(playerSessionID string) error {
	if err := p.playerSessionCall(playerSessionID, false); err != nil {
		return err
	}
	p.playerLeft(playerSessionID)
	return nil
}

func (p *Process) playerSessionCall(id string, accept bool) error {
	if !psessPattern.MatchString(id) {
		return errorf(Validation, "PlayerSessionID must be 1 to 256 letters, digits, '.' or '-'")
	}
	gs, err := p.session()
	if err != nil {
		return err
	}
	var r sdkwire.Request = &sdkwire.RemovePlayerSession{GameSessionId: gs, PlayerSessionId: id}
	if accept {
		r = &sdkwire.AcceptPlayerSession{GameSessionId: gs, PlayerSessionId: id}
	}
	_, err = p.call(r, p.opts.RequestTimeout)
	return err
}

// UpdatePlayerSessionCreationPolicy lets new players in or keeps them out.
func (p *Process) UpdatePlayerSessionCreationPolicy(policy PlayerSessionCreationPolicy) error {
	if policy != AcceptAll && policy != DenyAll {
		return errorf(Validation, "policy must be ACCEPT_ALL or DENY_ALL")
	}
	gs, err := p.session()
	if err != nil {
		return err
	}
	_, err = p.call(&sdkwire.UpdatePlayerSessionCreationPolicy{GameSessionId: gs, PlayerSessionPolicy: string(policy)}, p.opts.RequestTimeout)
	return err
}

// GetGameSessionID returns the id of the game session this process hosts.
func (p *Process) GetGameSessionID() (string, error) { return p.session() }

// GetTerminationTime returns when the service will stop this process, in
// epoch seconds, once a TerminateProcess has said so.
func (p *Process) GetTerminationTime() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminationTime == 0 {
		return 0, errorf(TerminationTimeNotSet, "no termination time was given")
	}
	return p.terminationTime, nil
}

// ProcessEnding tells the service the process is shutting down; its game
// session ends. Health reports stop. Call Destroy next.
func (p *Process) ProcessEnding() error {
	_, err := p.call(&sdkwire.TerminateServerProcess{}, p.opts.RequestTimeout)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = false
	p.stopHealthLocked()
	return nil
}

func (p *Process) stopHealthLocked() {
	if p.stopHealth != nil {
		close(p.stopHealth)
		p.stopHealth = nil
	}
}

// Destroy closes the connection for good (close code 1001) and waits for
// the SDK's goroutines, not for running callbacks. Later calls fail.
func (p *Process) Destroy() error {
	p.mu.Lock()
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		return nil
	}
	p.cancel()
	p.stopHealthLocked()
	conns := append([]*websocket.Conn{p.conn}, p.old...)
	p.mu.Unlock()
	for _, c := range conns {
		if c != nil {
			c.Close(websocket.StatusGoingAway, "Websocket client closing")
		}
	}
	p.wg.Wait()
	return nil
}

// DescribePlayerSessions reads player sessions of this process's game session.
func (p *Process) DescribePlayerSessions(req DescribePlayerSessionsRequest) (DescribePlayerSessionsResult, error) {
	n := 0
	for _, s := range []string{req.GameSessionID, req.PlayerID, req.PlayerSessionID} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return DescribePlayerSessionsResult{}, errorf(Validation, "exactly one of GameSessionID, PlayerID and PlayerSessionID is required")
	}
	p.mu.Lock()
	ready := p.ready
	p.mu.Unlock()
	if !ready {
		return DescribePlayerSessionsResult{}, errorf(ProcessNotReady, "call ProcessReady first")
	}
	f, err := p.call(&sdkwire.DescribePlayerSessions{GameSessionId: req.GameSessionID, PlayerId: req.PlayerID,
		PlayerSessionId: req.PlayerSessionID, PlayerSessionStatusFilter: req.PlayerSessionStatusFilter,
		NextToken: req.NextToken, Limit: req.Limit}, p.opts.RequestTimeout)
	if err != nil {
		return DescribePlayerSessionsResult{}, err
	}
	var res sdkwire.DescribePlayerSessionsResult
	if err := f.Decode(&res); err != nil {
		return DescribePlayerSessionsResult{}, errorf(InternalService, "malformed answer: %v", err)
	}
	out := DescribePlayerSessionsResult{NextToken: res.NextToken, PlayerSessions: []PlayerSession{}}
	for _, s := range res.PlayerSessions {
		out.PlayerSessions = append(out.PlayerSessions, PlayerSession{PlayerSessionID: s.PlayerSessionId,
			PlayerID: s.PlayerId, GameSessionID: s.GameSessionId, FleetID: s.FleetId, PlayerData: s.PlayerData,
			IPAddress: s.IpAddress, DNSName: s.DnsName, Port: s.Port, CreationTime: s.CreationTime,
			TerminationTime: s.TerminationTime, Status: s.Status})
	}
	return out, nil
}
