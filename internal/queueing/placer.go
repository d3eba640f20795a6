package queueing

import (
	"context"
	"strconv"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/placement"
	"github.com/anylift/anylift/internal/store"
)

// placeBatch is how many PENDING placements one placer transaction takes.
const placeBatch = 64

// wakePlacer asks the placer to look for placeable placements: after a
// placement starts, a process becomes free, or a provisional session
// fails. It never blocks; wakes while the placer is busy coalesce.
func (s *Service) wakePlacer() {
	select {
	case s.placerWake <- struct{}{}:
	default:
	}
}

// WakePlacer asks the placer to look for placeable placements: control
// calls it when a process becomes free, FlexMatch when a match's
// placement starts, and another node when it found that one is this
// node's to place.
func (s *Service) WakePlacer() { s.wakePlacer() }

// RunPlacer is the committer: it applies placement decisions, one batch
// per transaction, whenever woken, until ctx ends. Control's Run runs it.
func (s *Service) RunPlacer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.placerWake:
		}
		if err := s.PlacePending(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("placing game sessions", "err", err)
		}
	}
}

// PlacePending places every PENDING placement that has no game session
// yet and can be placed now, batch by batch, and pushes the new sessions
// to their processes. Placements without capacity stay PENDING.
func (s *Service) PlacePending(ctx context.Context) error {
	var after *game.Placement
	snap := &snapshot{s: s, now: s.clock()}
	for {
		n, last, err := s.placeOnce(ctx, snap, after)
		if err != nil || n < placeBatch {
			return err
		}
		after = last
	}
}

// placed is a session created by the placer, to push after commit.
type placed struct {
	gs   *game.GameSession
	proc *game.Process
}

// placeOnce runs one placer transaction over up to placeBatch unplaced
// placements after the given one (nil: from the oldest) and answers how
// many it looked at and the last of them. snap carries what was learnt
// (queues, fleets, free counts) from one batch to the next.
func (s *Service) placeOnce(ctx context.Context, snap *snapshot, after *game.Placement) (int, *game.Placement, error) {
	var (
		out  []placed
		list []*game.Placement
	)
	tries := 0
	err := s.update(ctx, func(tx store.Tx) error {
		out = out[:0]
		if tries++; tries > 1 {
			// Run again (a placement changed since it was listed, a
			// deadlock): the counts taken down by claims the store
			// undid are read again.
			clear(snap.free)
			for id := range snap.fleets {
				snap.free[id] = map[string]int{}
			}
		}
		var err error
		list, err = tx.ListPendingPlacements(store.PendingQuery{Unplaced: true, After: after}, placeBatch)
		if err != nil {
			return err
		}
		snap.tx = tx
		for _, p := range list {
			pl, err := snap.place(p)
			if err != nil {
				return err
			}
			if pl != nil {
				out = append(out, *pl)
			}
		}
		return nil
	})
	if err != nil || len(list) == 0 {
		return 0, nil, err
	}
	for _, pl := range out {
		s.ctl.SessionPlaced(pl.gs, pl.proc)
	}
	return len(list), list[len(list)-1], nil
}

// snapshot caches, for one PlacePending call, the queues, their
// candidates and the free-process counts the decisions are made over.
// Counts are read lazily, only for candidates a decision reaches, so the
// ranking itself (placement.Rank) sees Free -1 (unknown) and the
// committer skips candidates whose count is 0.
type snapshot struct {
	s      *Service
	tx     store.Tx
	now    time.Time
	queues map[string]*game.Queue
	others map[string]bool // queue → every fleet of it is another node's
	fleets map[string]*game.Fleet
	free   map[string]map[string]int // fleet → location → free processes
}

// place decides where p goes and applies the decision: a new ACTIVATING
// session on a claimed process, recorded as p's provisional session.
// p is as the job's pending list read it, unlocked: the store guards its
// write on the placement being still PENDING without a game session, so
// that one that another node stopped, timed out, failed with its queue or
// placed meanwhile is not written, and the job, the claim and the session
// with it, fails and runs again from the store. It answers nil when no
// candidate has a free process, or when it is due to time out (the timer
// ends it).
func (sn *snapshot) place(p *game.Placement) (*placed, error) {
	if !sn.now.Before(p.Deadline) {
		return nil, nil
	}
	q, err := sn.queue(p.QueueName)
	if err != nil || q == nil {
		return nil, err
	}
	if sn.othersOnly(q) {
		// Every fleet of the queue is another node's: their owners
		// place it. They were woken when it started (wakePlacerFor),
		// run their placers when they gain a fleet, and at every
		// sweep; this node neither reads their fleets nor wakes them
		// again at each of its own runs (which would wake their placers
		// as often as this node's runs, each for nothing new).
		return nil, nil
	}
	cands, err := sn.candidates(q)
	if err != nil {
		return nil, err
	}
	req := placement.Request{Latencies: p.Latencies, Policies: q.LatencyPolicies, PriorityOrder: q.PriorityOrder,
		LocationOrder: q.LocationOrder, AllowedLocations: q.AllowedLocations, Override: p.Override, Start: p.StartTime}
	ranked := placement.Rank(cands, req, sn.now)
	if !sn.ownsAny(ranked) {
		// None of the candidates is this node's: the owner of the best
		// ranked places it. It counts the free processes itself, of its
		// own fleets and of the others', and wakes another owner whose
		// fleet is the best with room; none of them wakes this node, which
		// can place nothing.
		if len(ranked) > 0 {
			sn.s.ctl.WakeOwner(ranked[0].FleetID)
		}
		return nil, nil
	}
	for _, c := range ranked {
		if sn.s.ctl.PlacementHeld(p, c.FleetID, c.Location, sn.now) {
			continue
		}
		free, err := sn.freeIn(c.FleetID, c.Location)
		if err != nil {
			return nil, err
		}
		if free <= 0 {
			continue
		}
		if !sn.s.ctl.Owns(c.FleetID) {
			// The best candidate with room is another node's fleet: its
			// owner places the placement (its placer sees the same
			// ranking), and is woken to.
			sn.s.ctl.WakeOwner(c.FleetID)
			return nil, nil
		}
		pl, err := sn.claim(p, sn.fleets[c.FleetID], c.Location)
		if err != nil || pl != nil {
			return pl, err
		}
	}
	return nil, nil
}

// claim creates p's session on a free process of f in location; nil when
// none is free after all (the count was stale, or activations are capped).
func (sn *snapshot) claim(p *game.Placement, f *game.Fleet, location string) (*placed, error) {
	gs, proc, err := sn.s.createPlacedSession(sn.tx, f, location, p)
	if err != nil {
		return nil, err
	}
	if gs == nil {
		sn.free[f.ID][location] = 0
		return nil, nil
	}
	sn.free[f.ID][location]--
	p.GameSessionID, p.GameSessionRegion, p.FleetID = gs.ID, location, f.ID
	p.IPAddress, p.DNSName, p.Port = gs.IPAddress, gs.DNSName, gs.Port
	if err := sn.tx.UpdatePlacement(p); err != nil {
		return nil, err
	}
	return &placed{gs, proc}, nil
}

// othersOnly reports whether every destination of q names a fleet that
// another node owns (Service.othersOnly), once per queue and snapshot.
func (sn *snapshot) othersOnly(q *game.Queue) bool {
	if sn.others == nil {
		sn.others = map[string]bool{}
	}
	others, ok := sn.others[q.Name]
	if !ok {
		_, others = sn.s.othersOnly(q.Destinations)
		sn.others[q.Name] = others
	}
	return others
}

// ownsAny reports whether this node acts for one of the candidates' fleets.
func (sn *snapshot) ownsAny(cands []placement.Candidate) bool {
	for _, c := range cands {
		if sn.s.ctl.Owns(c.FleetID) {
			return true
		}
	}
	return false
}

func (sn *snapshot) queue(name string) (*game.Queue, error) {
	if sn.queues == nil {
		sn.queues = map[string]*game.Queue{}
	}
	if q, ok := sn.queues[name]; ok {
		return q, nil
	}
	q, err := sn.tx.GetQueue(name)
	if game.IsKind(err, game.NotFound) {
		q, err = nil, nil // deleted: its placements were failed with it
	}
	sn.queues[name] = q
	return q, err
}

// candidates lists every (fleet, location) of q's destinations: aliases
// resolved now, TERMINAL or dangling ones skipped, fleets not ACTIVE
// skipped, a fleet listed twice kept at its first place.
func (sn *snapshot) candidates(q *game.Queue) ([]placement.Candidate, error) {
	if sn.fleets == nil {
		sn.fleets, sn.free = map[string]*game.Fleet{}, map[string]map[string]int{}
	}
	var out []placement.Candidate
	seen := map[string]bool{}
	for i, d := range q.Destinations {
		f, err := sn.fleet(d)
		if err != nil {
			return nil, err
		}
		if f == nil || seen[f.ID] || f.Status != game.FleetActive {
			continue
		}
		seen[f.ID] = true
		cost, _ := strconv.ParseFloat(f.AnywhereCost, 64)
		for _, loc := range f.Locations {
			out = append(out, placement.Candidate{FleetID: f.ID, Location: loc, Destination: i, Cost: cost, Free: -1})
		}
	}
	return out, nil
}

// fleet resolves a destination to its fleet, loading its free counts
// once; nil for a destination that leads nowhere now.
func (sn *snapshot) fleet(dest string) (*game.Fleet, error) {
	id := game.ResourceID(dest, "fleet")
	if destinationKind(dest) == "alias" {
		fid, err := sn.s.ctl.AliasFleet(sn.tx, dest)
		if game.IsKind(err, game.NotFound) || game.IsKind(err, game.TerminalRoutingStrategy) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		id = fid
	}
	if f, ok := sn.fleets[id]; ok {
		return f, nil
	}
	f, err := sn.tx.GetFleet(id)
	if game.IsKind(err, game.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sn.fleets[id], sn.free[id] = f, map[string]int{}
	return f, nil
}

// freeIn is the snapshot's count of free processes of a fleet in a
// location, read (up to placeBatch) the first time it is needed.
func (sn *snapshot) freeIn(fleetID, location string) (int, error) {
	if n, ok := sn.free[fleetID][location]; ok {
		return n, nil
	}
	n, err := sn.tx.CountFreeProcesses(fleetID, location, placeBatch)
	if err != nil {
		return 0, err
	}
	sn.free[fleetID][location] = n
	return n, nil
}
