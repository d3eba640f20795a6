package server

import (
	"math/rand/v2"
	"time"

	"github.com/anylift/anylift/internal/sdkwire"
)

// healthLoop reports health at once, then every HealthCheckInterval ±
// HealthCheckJitter, until stop closes. A failed report is only logged.
func (p *Process) healthLoop(stop chan struct{}) {
	defer p.wg.Done()
	for {
		healthy := p.checkHealth(stop)
		if _, err := p.call(&sdkwire.HeartbeatServerProcess{HealthStatus: healthy}, p.opts.RequestTimeout); err != nil {
			p.opts.Logger.Warn("heartbeat failed", "err", err)
		}
		select {
		case <-stop:
			return
		case <-time.After(p.nextInterval()):
		}
	}
}

func (p *Process) nextInterval() time.Duration {
	j := p.opts.HealthCheckJitter
	return p.opts.HealthCheckInterval - j + rand.N(2*j+1)
}

// checkHealth runs OnHealthCheck with HealthCheckTimeout; a callback that
// does not return in time reports unhealthy. No callback reports healthy.
func (p *Process) checkHealth(stop chan struct{}) bool {
	p.mu.Lock()
	cb := p.pp.OnHealthCheck
	p.mu.Unlock()
	if cb == nil {
		return true
	}
	res := make(chan bool, 1)
	go func() { res <- cb() }()
	select {
	case h := <-res:
		return h
	case <-time.After(p.opts.HealthCheckTimeout):
		return false
	case <-stop:
		return false
	}
}
