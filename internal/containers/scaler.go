package containers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// The scaler evaluates the scaling policies of the container fleets this
// node acts for (all of them, or those it owns under fleet ownership) on
// Anylift's own fleet metrics (store.MetricsTx.FleetMetrics), and moves
// each location's desired capacity. It looks at every scaled fleet once a
// tick, and at once at a fleet with a target-based policy that has just
// had a game session placed, or refused for want of a server.
//
// Target-based (PercentAvailableGameSessions, the buffer): with u game
// sessions in use (ACTIVATING or ACTIVE) and a buffer of t percent, the
// fleet needs ceil(u / (1 - t/100)) game server slots, and at least u+2
// when t > 0: one free server for the next session, and one more for the
// session after it while the server the next one asks for starts, so that
// a small fleet is not left without a free server at each session. One
// slot is a game server container group, so it needs that many slots
// divided by GroupsPerInstance instances (rounded up), within MinSize and
// MaxSize. More than the desired capacity is asked for at once. Less is
// asked for only once the fleet has needed less for ScaleDownDelay
// without a break, and then down to the most it needed in that time;
// never within ScaleDownDelay of the policy's last change. The
// controller then removes idle groups only.
//
// Rule-based: once the rule's metric has compared to its threshold at
// every look for EvaluationPeriods minutes, the adjustment is made, and
// the next one waits as long again. QueueDepth and WaitTime are not
// measured per fleet, so rules on them never act.
//
// The window of each policy is held in this node's memory: a restart
// starts it again, which only delays a scale-down. What decides is
// checked again in the write transaction (the policy's ActedAt, the
// current capacity), so two nodes evaluating one fleet act once.

// defaultScaleDownDelay is Config.ScaleDownDelay's default.
const defaultScaleDownDelay = 5 * time.Minute

// scaleKey is one policy in one location of its fleet.
type scaleKey struct{ fleet, location, policy string }

// lowWindow is a time the fleet has needed fewer instances than wanted:
// since when, and the most it needed since.
type lowWindow struct {
	since time.Time
	peak  int
}

// scaler is the scaler's state in memory.
type scaler struct {
	wake chan struct{}

	mu sync.Mutex
	// targets are the fleets with a target-based policy, as last read;
	// dirty those of them to look at now.
	targets map[string]bool
	dirty   map[string]bool
	low     map[scaleKey]lowWindow
	held    map[scaleKey]time.Time // since when a rule's condition holds

	// changed is closed when a fleet's capacity changes (capacityChanged).
	changed chan struct{}
}

func newScaler() *scaler {
	return &scaler{wake: make(chan struct{}, 1), targets: map[string]bool{}, dirty: map[string]bool{},
		low: map[scaleKey]lowWindow{}, held: map[scaleKey]time.Time{}}
}

// policyPut notes a policy written: its windows start again.
func (sc *scaler) policyPut(p *game.ScalingPolicy) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if p.PolicyType == game.PolicyTargetBased {
		sc.targets[p.FleetID] = true
	}
	sc.forget(func(k scaleKey) bool { return k.fleet == p.FleetID && k.policy == p.Name })
}

// policyGone forgets a deleted policy.
func (sc *scaler) policyGone(fleetID, name string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.forget(func(k scaleKey) bool { return k.fleet == fleetID && k.policy == name })
}

// forgetLocation forgets the windows of a fleet's location.
func (sc *scaler) forgetLocation(fleetID, location string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.forget(func(k scaleKey) bool { return k.fleet == fleetID && k.location == location })
}

// forget drops the windows whose key gone says; sc.mu is held.
func (sc *scaler) forget(gone func(scaleKey) bool) {
	for k := range sc.low {
		if gone(k) {
			delete(sc.low, k)
		}
	}
	for k := range sc.held {
		if gone(k) {
			delete(sc.held, k)
		}
	}
}

// read records the fleets scaled as a full look found them, and forgets
// the windows of the others.
func (sc *scaler) read(scaled, targets []string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	keep := map[string]bool{}
	for _, id := range scaled {
		keep[id] = true
	}
	sc.forget(func(k scaleKey) bool { return !keep[k.fleet] })
	sc.targets = map[string]bool{}
	for _, id := range targets {
		sc.targets[id] = true
	}
}

// mark asks for a look at fleetID and reports whether it has a target
// policy (only then is a look worth it).
func (sc *scaler) mark(fleetID string, always bool) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !always && !sc.targets[fleetID] {
		return false
	}
	sc.dirty[fleetID] = true
	return true
}

// takeDirty returns the fleets asked for and clears the set.
func (sc *scaler) takeDirty() []string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := make([]string, 0, len(sc.dirty))
	for id := range sc.dirty {
		out = append(out, id)
	}
	clear(sc.dirty)
	return out
}

// lower notes that k needs want, fewer than wanted, at now, and returns
// its window.
func (sc *scaler) lower(k scaleKey, now time.Time, want int) lowWindow {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	w, ok := sc.low[k]
	if !ok {
		w = lowWindow{since: now, peak: want}
	}
	w.peak = max(w.peak, want)
	sc.low[k] = w
	return w
}

// enough ends k's window: the fleet needs what it wants, or more.
func (sc *scaler) enough(k scaleKey) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.low, k)
}

// holding notes that k's rule holds at now (since is reset by acted) and
// returns since when; stopped forgets it.
func (sc *scaler) holding(k scaleKey, now time.Time) time.Time {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	since, ok := sc.held[k]
	if !ok {
		since = now
		sc.held[k] = now
	}
	return since
}

func (sc *scaler) stopped(k scaleKey) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.held, k)
}

// acted starts k's windows again after it changed the capacity at now:
// a rule's from now, a target's from rest (none when zero).
func (sc *scaler) acted(k scaleKey, now time.Time, rest lowWindow) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.low, k)
	if !rest.since.IsZero() {
		sc.low[k] = rest
	}
	if _, ok := sc.held[k]; ok {
		sc.held[k] = now
	}
}

// CapacityChanged returns a channel closed at the next change of a
// fleet's desired capacity made on this node (UpdateFleetCapacity, the
// scaler), so that whatever runs the fleet need not wait for its next
// look.
func (s *Service) CapacityChanged() <-chan struct{} {
	sc := s.scaler
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.changed == nil {
		sc.changed = make(chan struct{})
	}
	return sc.changed
}

func (s *Service) capacityChanged() {
	sc := s.scaler
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.changed != nil {
		close(sc.changed)
		sc.changed = nil
	}
}

// wakeScaler asks the scaler to look at fleetID now.
func (s *Service) wakeScaler(fleetID string) {
	s.scaler.mark(fleetID, true)
	s.pokeScaler()
}

// SessionDemand tells the scaler a game session was placed on fleetID, or
// found no server there: a fleet with a target-based policy is looked at
// now rather than at the next tick.
func (s *Service) SessionDemand(fleetID string) {
	if s.scaler.mark(fleetID, false) {
		s.pokeScaler()
	}
}

func (s *Service) pokeScaler() {
	select {
	case s.scaler.wake <- struct{}{}:
	default:
	}
}

// RunScaler looks at every scaled fleet once a tick, and at the fleets
// asked for when woken, until ctx ends.
func (s *Service) RunScaler(ctx context.Context) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.logSweep(ctx, s.ScaleFleets(ctx))
		case <-s.scaler.wake:
			s.logSweep(ctx, s.scaleDirty(ctx))
		}
	}
}

// ScaleFleets evaluates the policies of every fleet this node scales,
// at the service clock's now.
func (s *Service) ScaleFleets(ctx context.Context) error {
	var scaled, targets []string
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		if scaled, err = tx.ScaledFleets(""); err != nil {
			return err
		}
		targets, err = tx.ScaledFleets(game.PolicyTargetBased)
		return err
	})
	if err != nil {
		return err
	}
	s.scaler.read(scaled, targets)
	s.scaler.takeDirty() // every fleet is looked at below
	var errs []error
	for _, id := range scaled {
		if s.ctl.Owns(id) {
			errs = append(errs, s.scaleFleet(ctx, id, false))
		}
	}
	return errors.Join(errs...)
}

// scaleDirty evaluates the target-based policies of the fleets asked
// for, for a scale-up only (the tick takes care of the rest).
func (s *Service) scaleDirty(ctx context.Context) error {
	var errs []error
	for _, id := range s.scaler.takeDirty() {
		if s.ctl.Owns(id) {
			errs = append(errs, s.scaleFleet(ctx, id, true))
		}
	}
	return errors.Join(errs...)
}

// scaleStep is one change a policy asks of a location's capacity; decide
// says, from the location's capacity and the policy as the write
// transaction reads them, what the desired capacity becomes (ok false:
// nothing to do after all).
type scaleStep struct {
	key    scaleKey
	why    string
	decide func(c game.LocationCapacity, p *game.ScalingPolicy, now time.Time) (to int, ok bool)
	// rest is the window a scale-down leaves: the fleet may still need
	// less than it now wants, and that time counts from the step.
	rest lowWindow
}

// scaleFleet evaluates the ACTIVE policies of one fleet in each location
// where its auto-scaling runs; upOnly leaves out all but the target-based
// scale-up.
func (s *Service) scaleFleet(ctx context.Context, fleetID string, upOnly bool) error {
	now := s.clock()
	var f *game.Fleet
	var policies []*game.ScalingPolicy
	var metrics []game.FleetMetrics
	var usage []store.LocationUsage
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(fleetID); err != nil {
			return err
		}
		if f.Container == nil || f.Status != game.FleetActive {
			return nil
		}
		page := store.Page{Limit: 100}
		for {
			list, next, err := tx.ListScalingPolicies(f.ID, game.ScalingPolicyActive, page)
			if err != nil {
				return err
			}
			for _, p := range list {
				if !upOnly || p.PolicyType == game.PolicyTargetBased {
					policies = append(policies, p)
				}
			}
			if next == "" {
				break
			}
			page.Token = next
		}
		if len(policies) == 0 {
			return nil
		}
		if metrics, err = tx.FleetMetrics(f, now, now); err != nil {
			return err
		}
		for _, p := range policies {
			if p.MetricName == wire.MetricNameAvailableplayersessions {
				usage, err = tx.FleetUsage(f.ID)
				return err
			}
		}
		return nil
	})
	if game.IsKind(err, game.NotFound) || err == nil && len(policies) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range f.Capacity {
		if c.ScalingStopped {
			continue
		}
		m := game.FleetMetrics{FleetID: f.ID, Location: c.Location}
		for _, fm := range metrics {
			if fm.Location == c.Location {
				m = fm
			}
		}
		var u store.LocationUsage
		for _, lu := range usage {
			if lu.Location == c.Location {
				u = lu
			}
		}
		for _, p := range policies {
			k := scaleKey{f.ID, c.Location, p.Name}
			var step *scaleStep
			if p.PolicyType == game.PolicyTargetBased {
				step = s.targetStep(k, p, f, c, m, now, upOnly)
			} else {
				step = s.ruleStep(k, p, c, m, u, now)
			}
			if step != nil {
				errs = append(errs, s.applyScaling(ctx, step, now))
			}
		}
	}
	return errors.Join(errs...)
}

// bufferInstances is the instances a buffer of target percent needs with
// used game server slots in use, g slots an instance (see above).
func bufferInstances(used int, target float64, g int) int {
	slots := int(math.Ceil(float64(used)*100/(100-target) - 1e-9))
	if target > 0 && slots < used+2 {
		slots = used + 2
	}
	return (slots + g - 1) / g
}

// targetStep evaluates a target-based policy in one location.
func (s *Service) targetStep(k scaleKey, p *game.ScalingPolicy, f *game.Fleet, c game.LocationCapacity, m game.FleetMetrics, now time.Time, upOnly bool) *scaleStep {
	used := m.ActivatingGameSessions + m.ActiveGameSessions
	g := max(f.Container.GroupsPerInstance, 1)
	need := bufferInstances(used, p.TargetValue, g)
	want := min(max(need, c.Min), c.Max)
	why := fmt.Sprintf("%d game sessions in use of %d game server container groups wanted; a %g%% buffer needs %d instances",
		used, c.Desired*g, p.TargetValue, need)
	switch {
	case want > c.Desired:
		s.scaler.enough(k)
		return &scaleStep{key: k, why: why, decide: func(c game.LocationCapacity, _ *game.ScalingPolicy, _ time.Time) (int, bool) {
			to := min(max(want, c.Desired, c.Min), c.Max)
			return to, to > c.Desired
		}}
	case want == c.Desired:
		s.scaler.enough(k)
	case !upOnly:
		w := s.scaler.lower(k, now, want)
		if now.Sub(w.since) < s.cfg.ScaleDownDelay {
			return nil
		}
		why += fmt.Sprintf(", and at most %d for the last %s", w.peak, now.Sub(w.since).Round(time.Second))
		return &scaleStep{key: k, why: why, rest: lowWindow{since: now, peak: want}, decide: func(c game.LocationCapacity, p *game.ScalingPolicy, now time.Time) (int, bool) {
			if now.Sub(p.ActedAt) < s.cfg.ScaleDownDelay {
				return 0, false
			}
			to := min(max(w.peak, c.Min), c.Max)
			return to, to < c.Desired
		}}
	}
	return nil
}

// ruleStep evaluates a rule-based policy in one location.
func (s *Service) ruleStep(k scaleKey, p *game.ScalingPolicy, c game.LocationCapacity, m game.FleetMetrics, u store.LocationUsage, now time.Time) *scaleStep {
	v, ok := metricValue(p.MetricName, m, u)
	if !ok || !compare(v, p.ComparisonOperator, p.Threshold) {
		s.scaler.stopped(k)
		return nil
	}
	period := time.Duration(p.EvaluationPeriods) * time.Minute
	if since := s.scaler.holding(k, now); now.Sub(since) < period {
		return nil
	}
	why := fmt.Sprintf("%s was %g, %s %g, for %d minutes", p.MetricName, v, p.ComparisonOperator, p.Threshold, p.EvaluationPeriods)
	return &scaleStep{key: k, why: why, decide: func(c game.LocationCapacity, p *game.ScalingPolicy, now time.Time) (int, bool) {
		if !p.ActedAt.IsZero() && now.Sub(p.ActedAt) < period {
			return 0, false
		}
		to := min(max(adjust(c.Desired, p.AdjustmentType, p.Adjustment), c.Min), c.Max)
		return to, to != c.Desired
	}}
}

// metricValue is a fleet metric by its GameLift name; ok false for the
// metrics Anylift does not measure per fleet (QueueDepth, WaitTime).
func metricValue(name string, m game.FleetMetrics, u store.LocationUsage) (float64, bool) {
	if name == wire.MetricNameAvailableplayersessions {
		return float64(max(u.MaximumPlayers-u.CurrentPlayers, 0)), true
	}
	v, ok := m.Values()[name]
	return v, ok
}

// compare applies a ComparisonOperator.
func compare(v float64, op string, threshold float64) bool {
	switch op {
	case wire.ComparisonOperatorTypeGreaterthanorequaltothreshold:
		return v >= threshold
	case wire.ComparisonOperatorTypeGreaterthanthreshold:
		return v > threshold
	case wire.ComparisonOperatorTypeLessthanthreshold:
		return v < threshold
	case wire.ComparisonOperatorTypeLessthanorequaltothreshold:
		return v <= threshold
	}
	return false
}

// adjust applies a rule's adjustment to desired instances. A percentage
// change moves by at least one instance.
func adjust(desired int, typ string, n int) int {
	switch typ {
	case wire.ScalingAdjustmentTypeExactcapacity:
		return n
	case wire.ScalingAdjustmentTypePercentchangeincapacity:
		d := desired * n / 100
		if d == 0 && n > 0 {
			d = 1
		} else if d == 0 && n < 0 {
			d = -1
		}
		return desired + d
	}
	return desired + n
}

// applyScaling makes step in one transaction, against the fleet and the
// policy as they are now: FLEET_SCALING_EVENT, the policy's ActedAt.
func (s *Service) applyScaling(ctx context.Context, step *scaleStep, now time.Time) error {
	k := step.key
	changed := false
	err := s.update(ctx, func(tx store.Tx) error {
		changed = false
		f, err := tx.GetFleet(k.fleet)
		if err != nil {
			return err
		}
		c, ok := f.CapacityIn(k.location)
		if !ok || c.ScalingStopped || f.Status != game.FleetActive {
			return nil
		}
		p, err := tx.GetScalingPolicy(f.ID, k.policy)
		if err != nil {
			return err
		}
		if p.Status != game.ScalingPolicyActive {
			return nil
		}
		to, ok := step.decide(c, p, now)
		if !ok || to == c.Desired {
			return nil
		}
		from := c.Desired
		c.Desired = to
		f.SetCapacity(c)
		if err := tx.UpdateFleet(f); err != nil {
			return err
		}
		p.ActedAt = now
		if err := tx.PutScalingPolicy(p); err != nil {
			return err
		}
		changed = true
		return s.ctl.RecordEvent(tx, f.ID, "", wire.EventCodeFleetScalingEvent,
			fmt.Sprintf("Scaling policy %s changed the desired instances of fleet %s in %s from %d to %d: %s.",
				p.Name, f.ID, k.location, from, to, step.why))
	})
	if game.IsKind(err, game.NotFound) {
		return nil // the fleet or the policy went meanwhile
	}
	if err != nil {
		return err
	}
	if changed {
		s.scaler.acted(k, now, step.rest)
		s.capacityChanged()
	}
	return nil
}
