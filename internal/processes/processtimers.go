package processes

import (
	"context"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
)

// processBatch bounds the processes one sweep handles.
const processBatch = 200

// SweepProcesses is the server-process timer. A process whose connection
// dropped ProcessLostGrace ago without a reconnect is lost: it ends with
// SERVER_PROCESS_CRASHED and its game session with it. An ACTIVE process
// without a healthy report for UnhealthyTimeout (silent, or reporting
// unhealthy) is terminated as unhealthy. A
// connection whose auth token expires within the refresh margin is sent
// RefreshConnection with a new token.
//
// Reading the store for that reads every live process (one condition, a
// report older than a time, has no index, and an index on the report's
// time would make every health report rewrite all the process's index
// entries). So a run first asks the store when the first process will be
// due (NextStale, every node's processes); before then it lists nothing,
// and the runs until then, or until staleWindow has passed, read nothing
// (staleGate): a process written after the reading is due no sooner than
// staleWindow later, its times being the writer's now. The writes that
// set an earlier time (a connection with a token near its expiry, a
// refresh given back) move the gate (dueBy); another node's such write
// is seen at the next reading, at most staleWindow later.
func (s *Service) SweepProcesses(ctx context.Context) error {
	now := s.clock()
	gen, read := s.stale.open(now)
	if !read {
		return nil
	}
	var stale []*game.Process
	var next time.Time
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		if next, err = tx.NextStale(s.cfg.ProcessLostGrace, s.cfg.UnhealthyTimeout, s.cfg.RefreshMargin); err != nil ||
			next.IsZero() || now.Before(next) {
			return err
		}
		stale, err = tx.StaleProcesses(now.Add(-s.cfg.ProcessLostGrace), now.Add(-s.cfg.UnhealthyTimeout),
			now.Add(s.cfg.RefreshMargin), processBatch)
		return err
	})
	if err != nil {
		return err
	}
	if next.IsZero() || now.Before(next) {
		at := now.Add(s.staleWindow())
		if !next.IsZero() && next.Before(at) {
			at = next
		}
		s.stale.close(gen, at)
	}
	// Otherwise a process is due (this node's, or another's whose node
	// acts on it): the next run reads again.
	for _, p := range stale {
		if err := s.sweepProcess(ctx, refOf(p), now); err != nil {
			return err
		}
	}
	return nil
}

// sweepProcess applies the timers to one process, re-reading it in the
// transaction so a reconnect or heartbeat that came meanwhile wins.
func (s *Service) sweepProcess(ctx context.Context, ref Ref, now time.Time) error {
	var ended, lost, refresh *game.Process
	var claim time.Time // the TokenExpires that claims a refresh
	err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
		switch {
		case !p.Connected && !p.DisconnectedAt.IsZero() && !p.DisconnectedAt.After(now.Add(-s.cfg.ProcessLostGrace)):
			// A process whose holder is alive (again) is not lost: its
			// node was only slow, and reclaims it at its next heartbeat.
			if _, live, err := s.holderAlive(tx, ref); err != nil || live {
				return err
			}
			lost = p
			return s.endProcess(tx, p, game.SessionTerminated, game.ReasonInterrupted, "SERVER_PROCESS_CRASHED",
				"Server process "+p.PID+" on compute "+p.ComputeName+" lost its connection and did not come back.")
		case p.Status == game.ProcessActive && s.unhealthyTooLong(p, now):
			ended = p
			return s.terminateUnhealthy(tx, p, s.unhealthyReason())
		case p.Connected && !p.TokenExpires.IsZero() && !p.TokenExpires.After(now.Add(s.cfg.RefreshMargin)):
			// Claimed here, in the transaction that decided it: a sweep
			// running beside this one (another node's, or the loop's
			// beside an explicit Sweep) re-reads the process after this
			// commits and leaves it alone, rather than sending a second
			// RefreshConnection.
			before := *p
			refresh, claim = &before, now.Add(s.cfg.AuthTokenTTL).Truncate(time.Millisecond)
			p.TokenExpires = claim
		}
		return nil
	})
	if game.IsKind(err, game.InvalidRequest) || game.IsKind(err, game.NotFound) {
		return nil // ended meanwhile
	}
	if err != nil {
		return err
	}
	if ended != nil {
		s.sendTerminate(ended)
	}
	if lost != nil {
		s.forget(ref)
	}
	if refresh != nil {
		if err := s.refreshConnection(ctx, refresh); err != nil {
			// Not sent: give the claim back (unless a reconnect replaced
			// it), so that the next sweep tries again before the current
			// token expires.
			s.updateProcess(ctx, ref, func(_ store.Tx, q *game.Process) error {
				if q.TokenExpires.Equal(claim) {
					q.TokenExpires = refresh.TokenExpires
				}
				return nil
			})
			s.dueBy(refresh.TokenExpires.Add(-s.cfg.RefreshMargin))
			return err
		}
	}
	return nil
}

// refreshConnection mints a new auth token for the process's compute and
// sends RefreshConnection; the process reconnects with it.
func (s *Service) refreshConnection(ctx context.Context, p *game.Process) error {
	out, err := s.mintAuthToken(ctx, p.FleetID, p.ComputeName)
	if err != nil {
		return err
	}
	s.push(refOf(p), &sdkwire.RefreshConnection{RefreshConnectionEndpoint: s.refreshEndpoint(p), AuthToken: out.Secret})
	// Until the process reconnects, do not refresh it again at every tick.
	return s.updateProcess(ctx, refOf(p), func(tx store.Tx, q *game.Process) error {
		q.TokenExpires = out.Expires
		return nil
	})
}

// refreshEndpoint is where a RefreshConnection sends p: the configured
// public endpoint when there is one, else the URL p connected through, so
// that a process that came over TLS stays on TLS (the C++ SDK speaks
// nothing else; a Go SDK that chose wss:// keeps it).
func (s *Service) refreshEndpoint(p *game.Process) string {
	if s.cfg.SDKEndpointPublic || p.Endpoint == "" {
		return s.cfg.SDKEndpoint
	}
	return p.Endpoint
}

// SweepActivations ends game sessions still ACTIVATING after their fleet's
// GameSessionActivationTimeoutSeconds (300 s by default): ERROR, with the
// event GAME_SESSION_ACTIVATION_TIMEOUT.
func (s *Service) SweepActivations(ctx context.Context) error {
	now := s.clock()
	cutoff := now.Add(-time.Duration(game.MinActivationTimeoutSeconds) * time.Second)
	// Look first in a read transaction: most seconds there is nothing to
	// do, and the writer is left alone.
	var pending []*game.GameSession
	if err := s.view(ctx, func(tx store.Tx) error {
		var err error
		pending, err = tx.ActivatingSince(cutoff, processBatch)
		return err
	}); err != nil || len(pending) == 0 {
		return err
	}
	return s.update(ctx, func(tx store.Tx) error {
		list, err := tx.ActivatingSince(cutoff, processBatch)
		if err != nil {
			return err
		}
		for _, listed := range list {
			// Re-read under the row's lock: another node's sweep, or the
			// process's ActivateGameSession, may have moved it meanwhile.
			gs, err := tx.GetGameSession(listed.ID)
			if err != nil {
				return err
			}
			if gs.Status != game.SessionActivating {
				continue
			}
			f, err := tx.GetFleet(gs.FleetID)
			if err != nil {
				if game.IsKind(err, game.NotFound) {
					continue
				}
				return err
			}
			if now.Before(gs.CreationTime.Add(f.Runtime.ActivationTimeout())) {
				continue
			}
			if err := s.endSession(tx, gs, game.SessionError, ""); err != nil {
				return err
			}
			if err := s.ctl.RecordEvent(tx, gs.FleetID, gs.ID, "GAME_SESSION_ACTIVATION_TIMEOUT",
				"Game session "+gs.ID+" did not activate within "+f.Runtime.ActivationTimeout().String()+"."); err != nil {
				return err
			}
		}
		return nil
	})
}

// staleGate is when the process timer next needs to read the store: zero
// at first and after a run that found processes to act on.
type staleGate struct {
	mu  sync.Mutex
	at  time.Time
	gen uint64 // counts the moves of dueBy
}

// open reports whether a run at now reads the store, and the generation
// to close it with.
func (g *staleGate) open(now time.Time) (gen uint64, read bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen, !now.Before(g.at)
}

// close sets the next reading at at, unless a write moved the gate since
// open (the run's reading may predate that write): the next run reads.
func (g *staleGate) close(gen uint64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gen == gen {
		g.at = at
	}
}

// dueBy moves the process timer's next reading to at if that is sooner:
// a write made a process due then.
func (s *Service) dueBy(at time.Time) {
	g := &s.stale
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen++
	if at.Before(g.at) {
		g.at = at
	}
}

// staleWindow is how long after it is written a process can be due at
// the soonest: its times are the writer's now, and it is lost
// ProcessLostGrace after a disconnection, unhealthy UnhealthyTimeout
// after its activation or a healthy report, and refreshed RefreshMargin
// before the expiry of a token minted AuthTokenTTL ahead.
func (s *Service) staleWindow() time.Duration {
	return max(min(s.cfg.ProcessLostGrace, s.cfg.UnhealthyTimeout, s.cfg.AuthTokenTTL-s.cfg.RefreshMargin), 0)
}
