package server

import "sync"

// The package-level functions mirror GameLift's Go server SDK over one
// Process per program.
var (
	stdMu sync.Mutex
	std   *Process
)

func current() (*Process, error) {
	stdMu.Lock()
	defer stdMu.Unlock()
	if std == nil {
		return nil, errorf(NotInitialized, "call InitSDK first")
	}
	return std, nil
}

// InitSDK connects the program's process with params (overridden by the
// GAMELIFT_SDK_* environment variables) and GameLift's default timings.
func InitSDK(params ServerParameters) error {
	stdMu.Lock()
	defer stdMu.Unlock()
	if std != nil {
		return errorf(AlreadyInitialized, "InitSDK was already called")
	}
	p, err := Init(params, Options{})
	if err != nil {
		return err
	}
	std = p
	return nil
}

// InitSDKFromEnvironment is InitSDK with every parameter from the environment.
func InitSDKFromEnvironment() error { return InitSDK(ServerParameters{}) }

// ProcessReady: see Process.ProcessReady.
func ProcessReady(pp ProcessParameters) error {
	return with(func(p *Process) error { return p.ProcessReady(pp) })
}

// NotifyProcessReady: see Process.NotifyProcessReady.
func NotifyProcessReady(port int, logPaths []string, n Notifications) error {
	return with(func(p *Process) error { return p.NotifyProcessReady(port, logPaths, n) })
}

// ActivateGameSession: see Process.ActivateGameSession.
func ActivateGameSession() error { return with((*Process).ActivateGameSession) }

// AcceptPlayerSession: see Process.AcceptPlayerSession.
func AcceptPlayerSession(id string) error {
	return with(func(p *Process) error { return p.AcceptPlayerSession(id) })
}

// RemovePlayerSession: see Process.RemovePlayerSession.
func RemovePlayerSession(id string) error {
	return with(func(p *Process) error { return p.RemovePlayerSession(id) })
}

// UpdatePlayerSessionCreationPolicy: see Process.UpdatePlayerSessionCreationPolicy.
func UpdatePlayerSessionCreationPolicy(policy PlayerSessionCreationPolicy) error {
	return with(func(p *Process) error { return p.UpdatePlayerSessionCreationPolicy(policy) })
}

// DescribePlayerSessions: see Process.DescribePlayerSessions.
func DescribePlayerSessions(req DescribePlayerSessionsRequest) (DescribePlayerSessionsResult, error) {
	p, err := current()
	if err != nil {
		return DescribePlayerSessionsResult{}, err
	}
	return p.DescribePlayerSessions(req)
}

// GetGameSessionID: see Process.GetGameSessionID.
func GetGameSessionID() (string, error) {
	p, err := current()
	if err != nil {
		return "", err
	}
	return p.GetGameSessionID()
}

// GetTerminationTime: see Process.GetTerminationTime.
func GetTerminationTime() (int64, error) {
	p, err := current()
	if err != nil {
		return 0, err
	}
	return p.GetTerminationTime()
}

// SetPassiveDestroy: see Process.SetPassiveDestroy.
func SetPassiveDestroy(on bool) { with(func(p *Process) error { p.SetPassiveDestroy(on); return nil }) }

// ProcessEnding: see Process.ProcessEnding.
func ProcessEnding() error { return with((*Process).ProcessEnding) }

// Destroy ends the program's process connection; InitSDK may be called again.
func Destroy() error {
	stdMu.Lock()
	p := std
	std = nil
	stdMu.Unlock()
	if p == nil {
		return errorf(NotInitialized, "call InitSDK first")
	}
	return p.Destroy()
}

func with(f func(*Process) error) error {
	p, err := current()
	if err != nil {
		return err
	}
	return f(p)
}
