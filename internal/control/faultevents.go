package control

import (
	"context"
	"fmt"
	"strings"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/faults"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// How faults show: their events, log lines and API form (faults.go).

func faultAttrs(f faults.Fault, more ...any) []any {
	out := []any{"fault", f.ID, "kind", f.Kind, "fleet", f.Scope.FleetID}
	for _, kv := range [][2]string{{"location", f.Scope.Location}, {"compute", f.Scope.ComputeName},
		{"process", f.Scope.ProcessID}, {"game_session", f.Scope.GameSessionID}, {"player_session", f.Scope.PlayerSessionID}} {
		if kv[1] != "" {
			out = append(out, kv[0], kv[1])
		}
	}
	return append(out, more...)
}

// faultInjectedEvent writes the GENERIC_EVENT saying f was injected, about
// the narrowest thing it names, with what it acted on.
func (s *Service) faultInjectedEvent(tx store.Tx, f faults.Fault, affected []string) error {
	sc := f.Scope
	resource := firstNonEmpty(sc.PlayerSessionID, sc.ProcessID, sc.GameSessionID, sc.ComputeName, sc.FleetID)
	msg := fmt.Sprintf("Anylift fault %s injected (a test, not a real failure): %s on %s: %s.", f.ID, f.Kind, scopeText(sc), whatItDoes(f))
	if faults.Immediate(f.Kind) {
		msg += fmt.Sprintf(" Acted on %d: %s.", len(affected), strings.Join(affected, ", "))
	}
	return s.recordEvent(tx, sc.FleetID, resource, wire.EventCodeGenericEvent, msg)
}

// faultEndedEvent writes the GENERIC_EVENT saying f ended, and logs it.
func (s *Service) faultEndedEvent(ctx context.Context, f faults.Fault, why string) error {
	s.log.Warn("fault ended", faultAttrs(f, "why", why, "fired", f.Fired)...)
	err := s.update(ctx, func(tx store.Tx) error {
		return s.recordEvent(tx, f.Scope.FleetID, f.Scope.FleetID, wire.EventCodeGenericEvent,
			fmt.Sprintf("Anylift fault %s (%s) ended: %s; it acted %s.", f.ID, f.Kind, why, times(f.Fired)))
	})
	if game.IsKind(err, game.NotFound) {
		return nil
	}
	return err
}

func firstNonEmpty(list ...string) string {
	for _, v := range list {
		if v != "" {
			return v
		}
	}
	return ""
}

func scopeText(sc faults.Scope) string {
	parts := []string{"fleet " + sc.FleetID}
	for _, kv := range [][2]string{{"location", sc.Location}, {"compute", sc.ComputeName}, {"process", sc.ProcessID},
		{"game session", sc.GameSessionID}, {"player session", sc.PlayerSessionID}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}

// whatItDoes says in words what f does and for how long.
func whatItDoes(f faults.Fault) string {
	var what string
	switch f.Kind {
	case faults.PlacementFailure:
		what = "CreateGameSession answers FleetCapacityExceededException and queue placements find no room"
	case faults.PlacementDelay:
		what = fmt.Sprintf("new game sessions stay ACTIVATING %s before their process hears of them, and queue placements wait %s",
			f.Delay, f.Delay)
	case faults.MissHealthChecks:
		what = "health reports are lost; a process without a healthy report for the unhealthy timeout is terminated"
	case faults.DropConnection:
		what = "connections cut without a close frame"
		if f.Duration > 0 {
			what += fmt.Sprintf(", and refused for %s", f.Duration)
		}
		return what
	case faults.TerminateProcess:
		return "processes terminated, their game sessions ended"
	case faults.ExpireReservations:
		return "RESERVED player sessions timed out"
	}
	switch {
	case f.Count > 0 && f.Duration > 0:
		return fmt.Sprintf("%s, %s within %s", what, times(f.Count), f.Duration)
	case f.Count > 0:
		return fmt.Sprintf("%s, %s", what, times(f.Count))
	}
	return fmt.Sprintf("%s, for %s", what, f.Duration)
}

// times is "once", "2 times" and so on.
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// faultOut is a fault as the API shows it.
func faultOut(f faults.Fault) extapi.Fault {
	out := extapi.Fault{
		FaultId: f.ID, Kind: f.Kind, FleetId: f.Scope.FleetID, Location: f.Scope.Location, ComputeName: f.Scope.ComputeName,
		ProcessId: f.Scope.ProcessID, GameSessionId: f.Scope.GameSessionID, PlayerSessionId: f.Scope.PlayerSessionID,
		Count: f.Count, Fired: f.Fired,
	}
	if f.Duration > 0 {
		out.Duration = f.Duration.String()
	}
	if f.Delay > 0 {
		out.Delay = f.Delay.String()
	}
	created := f.Created
	out.CreatedAt = &created
	if !f.Until.IsZero() {
		until := f.Until
		out.ExpiresAt = &until
	}
	return out
}

// faultKey names one call for the fault hooks ("" when faults are off).
func (s *Service) faultKey() string {
	if s.fx == nil {
		return ""
	}
	return game.NewUUID()
}
