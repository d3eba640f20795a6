package devenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/extapi"
)

// watchStatus prints one line to cfg.Status saying what the dev fleet
// runs (server processes, game sessions, players, faults), each time that
// changes, looking every cfg.StatusEvery from start until ctx ends.
// Nothing is printed while the fleet runs nothing, nor twice in a row.
func (e *Env) watchStatus(ctx context.Context, cfg Config, start time.Time) {
	last := summary(&extapi.FleetStatus{})
	next := start
	for {
		next = next.Add(cfg.StatusEvery)
		if now := cfg.Now(); next.Before(now.Add(-cfg.StatusEvery)) {
			next = now // the clock jumped (a machine that slept): no catching up
		}
		select {
		case <-ctx.Done():
			return
		case <-cfg.Wake(next):
		}
		st, err := e.Server.Service().DescribeStatus(ctx, &extapi.DescribeStatusInput{FleetId: e.FleetID})
		if err != nil || len(st.Fleets) != 1 {
			continue // the next look may do better; dev's log has the cause
		}
		line := summary(&st.Fleets[0])
		if line != last {
			last = line
			fmt.Fprintf(cfg.Status, "%s %s\n", cfg.Now().Format("15:04:05"), line)
		}
		if cfg.StatusLooked != nil {
			cfg.StatusLooked(line)
		}
	}
}

// summary is the status line of a fleet.
func summary(f *extapi.FleetStatus) string {
	var ready, hosting, unhealthy, away, players int
	for _, p := range f.Processes {
		switch {
		case !p.Connected:
			away++
		case !p.Healthy:
			unhealthy++
		case p.Status == "ACTIVE":
			ready++
		}
		if p.GameSessionId != "" {
			hosting++
		}
	}
	byStatus := map[string]int{}
	var order []string
	for _, gs := range f.GameSessions {
		if byStatus[gs.Status] == 0 {
			order = append(order, gs.Status)
		}
		byStatus[gs.Status]++
		players += gs.CurrentPlayerSessionCount
	}
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s", count(len(f.Processes), "server process", "server processes"))
	var details []string
	for _, d := range []struct {
		n    int
		what string
	}{{ready, "ready"}, {hosting, "hosting"}, {unhealthy, "unhealthy"}, {away, "disconnected"}} {
		if d.n > 0 {
			details = append(details, fmt.Sprintf("%d %s", d.n, d.what))
		}
	}
	if len(details) > 0 {
		b.WriteString(" (" + strings.Join(details, ", ") + ")")
	}
	fmt.Fprintf(&b, ", %s", count(len(f.GameSessions), "game session", "game sessions"))
	details = details[:0]
	for _, s := range order {
		details = append(details, fmt.Sprintf("%d %s", byStatus[s], s))
	}
	if len(details) > 0 {
		b.WriteString(" (" + strings.Join(details, ", ") + ")")
	}
	fmt.Fprintf(&b, ", %s", count(players, "player", "players"))
	if n := len(f.Faults); n > 0 {
		fmt.Fprintf(&b, ", %s in force (anylift fault list)", count(n, "fault", "faults"))
	}
	return b.String()
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
