package control

import (
	"context"
	"time"

	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
)

// Fleet ownership (several nodes on PostgreSQL; internal/owners,
// docs/several-nodes.md). With SetOwners, the node takes part: its
// heartbeat says so, AssignFleets moves leases at every tick, its timers
// act only for the fleets it owns (the store narrows their queries), and
// the store refuses its writes for fleets it does not own.

const (
	// maxHandoffs bounds the fleets a node hands to others in one tick,
	// so that a node joining takes its share over a few seconds.
	maxHandoffs = 4
	// drainHandoffs bounds them for a node that drains or stops.
	drainHandoffs = 256
)

// SetOwners makes this node take part in fleet ownership through m. Call
// it before Run.
func (s *Service) SetOwners(m *owners.Map) {
	s.owners = m
	s.assignWake = make(chan struct{}, 1)
}

// WakeOwners asks this node to read the leases now: another node has just
// handed it a fleet.
func (s *Service) WakeOwners() {
	if s.assignWake == nil {
		return
	}
	select {
	case s.assignWake <- struct{}{}:
	default:
	}
}

// AssignFleets reads the leases and the nodes, refreshes this node's view
// of them, and makes the moves that are this node's to make: the fleets
// that should be its own and have no live owner, and a few of the fleets
// it holds that should be another's (owners.Plan).
func (s *Service) AssignFleets(ctx context.Context) error {
	if s.owners == nil {
		return nil
	}
	var leases []store.FleetOwner
	var nodes []*store.Node
	if err := s.view(ctx, func(tx store.Tx) error {
		var err error
		if nodes, err = tx.ListNodes(s.cfg.NodeTTL); err != nil {
			return err
		}
		leases, err = tx.FleetOwners()
		return err
	}); err != nil {
		return err
	}
	on := owners.On(nodes)
	s.owners.Refresh(leases, nodes, on)
	if !on {
		return nil
	}
	max := maxHandoffs
	if s.Draining() {
		max = drainHandoffs
	} else {
		leases = s.settledLeases(leases)
	}
	moves, drop := owners.Plan(s.cfg.NodeID, leases, nodes, max)
	return s.moveFleets(ctx, moves, drop)
}

// takeoverTenure is how long a node keeps a fleet it took over from a
// dead node before handing it to the node that should own it (3 node
// TTLs): a node that was only paused, and comes back, does not get its
// fleets back at once, in the middle of the calls that followed the
// takeover, nor a node that flaps move fleets at every flap.
func (s *Service) takeoverTenure() time.Duration { return 3 * s.cfg.NodeTTL }

// settledLeases leaves out of leases the fleets this node took over less
// than the takeover tenure ago, so that Plan does not hand them on yet.
func (s *Service) settledLeases(leases []store.FleetOwner) []store.FleetOwner {
	s.takenMu.Lock()
	defer s.takenMu.Unlock()
	now := s.now()
	out := leases[:0:0]
	for _, l := range leases {
		if at, ok := s.taken[l.FleetID]; ok {
			if l.NodeID == s.cfg.NodeID && now.Sub(at) < s.takeoverTenure() {
				continue
			}
			delete(s.taken, l.FleetID)
		}
		out = append(out, l)
	}
	return out
}

// moveFleets makes moves, each in a transaction of its own (a move waits
// for the fleet's writes in flight), and drops the leases of fleets that
// are gone.
func (s *Service) moveFleets(ctx context.Context, moves []owners.Move, drop []string) error {
	for _, mv := range moves {
		var got store.FleetOwner
		var ok bool
		if err := s.update(ctx, func(tx store.Tx) error {
			var err error
			got, ok, err = tx.MoveFleet(mv.From, mv.To)
			return err
		}); err != nil {
			return err
		}
		if !ok {
			continue // another node moved it first; the next tick reads it
		}
		s.owners.Moved(got)
		if mv.To == s.cfg.NodeID {
			if mv.From.NodeID != "" {
				s.takenMu.Lock()
				if s.taken == nil {
					s.taken = map[string]time.Time{}
				}
				s.taken[got.FleetID] = s.now()
				s.takenMu.Unlock()
			}
			s.log.Info("fleet owned by this node", "fleet", got.FleetID, "epoch", got.Epoch, "previous_owner", mv.From.NodeID)
		} else {
			s.log.Info("fleet handed to another node", "fleet", got.FleetID, "epoch", got.Epoch, "to", mv.To)
			s.wakeOwner(got.FleetID, true) // it serves the fleet once it knows
		}
	}
	if len(drop) == 0 {
		return nil
	}
	return s.update(ctx, func(tx store.Tx) error {
		for _, id := range drop {
			if err := tx.DropFleetOwner(id); err != nil {
				return err
			}
		}
		return nil
	})
}

// HandOffFleets gives every fleet this node holds to the node that should
// own it without this one, when it stops: they have an owner at once,
// rather than after the node TTL. The node is draining from then on.
func (s *Service) HandOffFleets(ctx context.Context) error {
	if s.owners == nil {
		return nil
	}
	s.SetDraining(true)
	if err := s.BeatNode(ctx); err != nil {
		return err
	}
	held := -1
	for {
		if err := s.AssignFleets(ctx); err != nil {
			return err
		}
		n := len(s.owners.Owned())
		if n == 0 || n == held || !s.owners.Fencing() {
			return nil // all handed over, or no node to take the rest
		}
		held = n
	}
}

// SetOwnerWake sets how this node wakes the node owning a fleet (over the
// node channel): a placement whose best candidate is a fleet of another
// node is placed by that node (its placer is woken), and a node handed a
// fleet reads the leases at once (leases).
func (s *Service) SetOwnerWake(f func(fleetID string, leases bool)) { s.ownerWake = f }

func (s *Service) wakeOwner(fleetID string, leases bool) {
	if s.ownerWake != nil {
		s.ownerWake(fleetID, leases)
	}
}

// owns reports whether this node acts for fleetID: it owns it, or
// ownership is off.
func (s *Service) owns(fleetID string) bool { return s.owners == nil || s.owners.Owns(fleetID) }

// FleetLease reads fleetID's lease from the store, and the forwarding
// address of the node holding it: what this node's view of the leases,
// read at its last tick, may not say yet.
func (s *Service) FleetLease(ctx context.Context, fleetID string) (l store.FleetOwner, address string, err error) {
	err = s.view(ctx, func(tx store.Tx) error {
		l, address, err = tx.FleetLease(fleetID)
		return err
	})
	return l, address, err
}
