package control

import (
	"context"
	"time"
)

// tick is how often the background loop looks for records whose time has
// come (expired reservations and the like).
const tick = time.Second

// Run drives the service's timers until ctx ends. Each sweep is a
// conditional update, safe to run on several nodes at once. The node's
// heartbeat has a loop of its own: a long sweep (a backlog of expired
// reservations after an outage, say) must never make the node look dead
// to the others, nor make it refuse traffic for a stale heartbeat.
func (s *Service) Run(ctx context.Context) {
	done := make(chan struct{}, 4)
	defer func() { <-done; <-done; <-done; <-done }()
	go func() {
		defer func() { done <- struct{}{} }()
		if s.owners != nil {
			every(ctx, s.assignWake, func() { s.logSweep(ctx, s.AssignFleets(ctx)) })
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		s.runPlacer(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		s.runScaler(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		every(ctx, nil, func() { s.logSweep(ctx, s.BeatNode(ctx)) })
	}()
	if s.cfg.ManualTimers {
		<-ctx.Done()
		return
	}
	every(ctx, nil, func() { s.sweepTimers(ctx) })
}

// every calls f once a tick, and at once on each receive from wake (nil:
// never), until ctx ends.
func every(ctx context.Context, wake <-chan struct{}, f func()) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		f()
	}
}

// Sweep beats the node's heartbeat and runs every timer once, the
// scaler's included, at the service clock's now.
func (s *Service) Sweep(ctx context.Context) {
	s.logSweep(ctx, s.BeatNode(ctx))
	s.logSweep(ctx, s.AssignFleets(ctx))
	s.sweepTimers(ctx)
	s.logSweep(ctx, s.scaleFleets(ctx))
}

func (s *Service) sweepTimers(ctx context.Context) {
	for _, sweep := range s.timers {
		s.logSweep(ctx, sweep(ctx))
	}
}

func (s *Service) logSweep(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		s.log.Warn("sweep failed", "err", err)
	}
}

// sweeps lists the timers, the heartbeat apart. Each area adds its own.
func (s *Service) sweeps() []func(context.Context) error {
	return []func(context.Context) error{
		s.processTimer(Processes.ReclaimStranded),
		s.processTimer(Processes.SweepOrphans),
		s.processTimer(Processes.SweepProcesses),
		s.processTimer(Processes.SweepActivations),
		s.sweepAuthTokens,
		s.processTimer(Processes.ExpireReservations),
		s.sweepPlacements,
		s.stepMatchmaking,
		s.processTimer(Processes.PruneHoldings),
		s.sweepFaults,
	}
}
