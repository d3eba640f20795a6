package control

import (
	"context"
	"time"
)

// tick is how often the background loop looks for records whose time has
// come (expired reservations and the like).
const tick = time.Second

// Run drives the service's timers until ctx ends. Each sweep is a
// conditional update, safe to run on several nodes at once.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(tick)
	defer t.Stop()
	placer := make(chan struct{})
	go func() {
		defer close(placer)
		s.runPlacer(ctx)
	}()
	defer func() { <-placer }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep(ctx)
		}
	}
}

// Sweep runs every timer once, at the service clock's now.
func (s *Service) Sweep(ctx context.Context) {
	for _, sweep := range s.sweeps() {
		if err := sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep failed", "err", err)
		}
	}
}

// sweeps lists the timers. Each area adds its own.
func (s *Service) sweeps() []func(context.Context) error {
	return []func(context.Context) error{
		s.BeatNode,
		s.reclaimStranded,
		s.sweepOrphans,
		s.sweepProcesses,
		s.sweepActivations,
		s.sweepAuthTokens,
		s.expireReservations,
		s.sweepPlacements,
		s.StepMatchmaking,
		s.pruneHoldings,
	}
}
