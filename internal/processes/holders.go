package processes

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
	"github.com/anylift/anylift/internal/store"
)

// Which node holds a process's connection, and what becomes of a process
// whose node dies or stalls. The node that holds a process's connection
// is recorded when it connects and released, conditionally on still being
// this node, when it disconnects; a node whose heartbeat is NodeTTL old
// by the database's clock is dead (internal/control's heartbeat), and the
// processes it held are marked disconnected (the process-lost grace then
// runs as on one node).

func keyOf(r Ref) store.ProcessKey {
	return store.ProcessKey{FleetID: r.FleetID, ComputeName: r.ComputeName, PID: r.PID}
}

// ProcessHolder returns the live node other than this one that holds p's
// connection, or nil when p is held here, by no one, or by a dead node.
func (s *Service) ProcessHolder(ctx context.Context, p Ref) (*store.Node, error) {
	var out *store.Node
	err := s.view(ctx, func(tx store.Tx) error {
		id, err := tx.ProcessHolder(p)
		if err != nil || id == "" || id == s.cfg.NodeID {
			return err
		}
		n, err := tx.GetNode(id, s.cfg.NodeTTL)
		if game.IsKind(err, game.NotFound) {
			return nil
		}
		if err == nil && n.Alive {
			out = n
		}
		return err
	})
	return out, err
}

// SweepOrphans marks disconnected the processes whose holding node is
// dead, as if their connections had dropped now: they reconnect to a live
// node, or are lost after ProcessLostGrace. The holder record stays: a
// node that was only slow (its heartbeat stalled past NodeTTL) finds its
// processes in it again and reclaims them (ReclaimStranded), and the
// lost-process timer spares a process whose holder is alive again.
func (s *Service) SweepOrphans(ctx context.Context) error {
	var orphans []store.ProcessKey
	if err := s.view(ctx, func(tx store.Tx) error {
		var err error
		orphans, err = tx.OrphanedProcesses(s.cfg.NodeTTL, processBatch)
		return err
	}); err != nil || len(orphans) == 0 {
		return err
	}
	now := s.clock()
	for _, k := range orphans {
		ref := k
		err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
			if !p.Connected {
				return nil
			}
			id, live, err := s.holderAlive(tx, k) // re-read under the process's lock
			if err != nil || id == "" || live {
				return err // it came back, or the process reconnected to a live node
			}
			s.log.Info("server process's node is gone", "process", k.PID, "node", id)
			p.Connected, p.DisconnectedAt = false, now
			return nil
		})
		if err != nil && !game.IsKind(err, game.InvalidRequest) && !game.IsKind(err, game.NotFound) {
			return err
		}
	}
	return nil
}

// holderAlive returns the node recorded as holding k's connection ("" for
// none) and whether that node is alive by the database's clock.
func (s *Service) holderAlive(tx store.Tx, k store.ProcessKey) (string, bool, error) {
	id, err := tx.ProcessHolder(k)
	if err != nil || id == "" {
		return id, false, err
	}
	n, err := tx.GetNode(id, s.cfg.NodeTTL)
	if game.IsKind(err, game.NotFound) {
		return id, false, nil
	}
	return id, err == nil && n.Alive, err
}

// ConnectionHolder is implemented by a Pusher that can tell whether a
// process's connection is open on this node.
type ConnectionHolder interface {
	Holds(p Ref) bool
}

func (s *Service) holds(ref Ref) bool {
	h, ok := s.pusher.(ConnectionHolder)
	return ok && h.Holds(ref)
}

// ReclaimStranded runs after each heartbeat. A process this node holds
// whose record says disconnected was taken for orphaned by another node
// while this node's heartbeat stalled (a long pause, a slow database): if
// its connection is still open here it is marked connected again and sent
// what it may have missed meanwhile; if not, the holder record is
// released and the process stays disconnected (lost after the grace).
func (s *Service) ReclaimStranded(ctx context.Context) error {
	var stranded []store.ProcessKey
	if err := s.view(ctx, func(tx store.Tx) error {
		var err error
		stranded, err = tx.StrandedProcesses(s.cfg.NodeID, processBatch)
		return err
	}); err != nil || len(stranded) == 0 {
		return err
	}
	now := s.clock()
	for _, k := range stranded {
		ref := k
		back := false
		err := s.updateProcess(ctx, ref, func(tx store.Tx, p *game.Process) error {
			id, err := tx.ProcessHolder(k) // re-read under the process's lock
			if err != nil || id != s.cfg.NodeID || p.Connected {
				return err
			}
			// Asked under the lock: a connection that closes after this
			// answer records its disconnection after this transaction.
			if back = s.holds(ref); back {
				s.log.Info("server process taken for orphaned is still connected here", "process", k.PID)
				p.Connected, p.DisconnectedAt = true, time.Time{}
				return nil
			}
			if p.DisconnectedAt.IsZero() {
				p.DisconnectedAt = now
			}
			_, err = tx.ReleaseProcess(k, s.cfg.NodeID)
			return err
		})
		if err != nil && !game.IsKind(err, game.InvalidRequest) && !game.IsKind(err, game.NotFound) {
			return err
		}
		if err == nil && back {
			if err := s.ProcessResumed(ctx, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// PruneHoldings deletes the holder records of ended processes whose node
// is dead or gone: nothing else would (a live holder releases its record
// when the connection closes).
func (s *Service) PruneHoldings(ctx context.Context) error {
	var ended []store.Holding
	if err := s.view(ctx, func(tx store.Tx) error {
		var err error
		ended, err = tx.EndedHoldings(s.cfg.NodeTTL, processBatch)
		return err
	}); err != nil || len(ended) == 0 {
		return err
	}
	return s.update(ctx, func(tx store.Tx) error {
		for _, h := range ended {
			if _, err := tx.ReleaseProcess(h.Process, h.NodeID); err != nil {
				return err
			}
		}
		return nil
	})
}

// ProcessResumed runs after a process's connection is up (a first
// connection or a reconnect): what was pushed to it while it was away,
// or on a node that died, is sent again from the store. A game session
// still ACTIVATING gets its CreateGameSession again (ActivateGameSession
// is idempotent); one TERMINATING gets TerminateProcess again, with its
// compute's termination time when the compute is being removed.
func (s *Service) ProcessResumed(ctx context.Context, ref Ref) error {
	var gs *game.GameSession
	var at time.Time // when the compute is to stop, if it is
	err := s.view(ctx, func(tx store.Tx) error {
		p, err := tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		if err != nil || p.GameSessionID == "" || p.Status != game.ProcessActive || p.AwaitingHeartbeat {
			return err // AwaitingHeartbeat: its first heartbeat pushes the start
		}
		if gs, err = tx.GetGameSession(p.GameSessionID); err != nil || gs.Status != game.SessionTerminating {
			return err
		}
		if c, err := tx.GetCompute(ref.FleetID, ref.ComputeName); err == nil && c.Status == game.ComputeTerminating {
			at = c.TerminationTime
		}
		return nil
	})
	if err != nil || gs == nil {
		return err
	}
	switch gs.Status {
	case game.SessionActivating:
		if !s.startHeld(gs.ID) {
			s.push(ref, startMessage(gs))
		}
	case game.SessionTerminating:
		if at.IsZero() {
			at = s.clock()
		}
		s.push(ref, &sdkwire.TerminateProcess{TerminationTime: at.UnixMilli()})
	}
	return nil
}

// DrainProcess sends a process connected here RefreshConnection with a
// fresh token and the advertised SDK endpoint (the load balancer's), so
// it reconnects to another node.
func (s *Service) DrainProcess(ctx context.Context, ref Ref) error {
	var p *game.Process
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		p, err = tx.GetProcess(ref.FleetID, ref.ComputeName, ref.PID)
		return err
	})
	if err != nil {
		return err
	}
	if p.Status == game.ProcessTerminated {
		return nil
	}
	return s.refreshConnection(ctx, p)
}
