package flexmatch

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking"
	"github.com/anylift/anylift/internal/owners"
)

// Match backfill into a game session of a fleet another node owns (fleet
// ownership, docs/several-nodes.md). The node that holds a matchmaking
// configuration's lease runs its steps, but a backfill writes the game
// session (its seats, its MatchmakerData), which only the fleet's owner
// may. So the matchmaker does not touch such a match: it sends it to the
// owner (FleetMatchCall), which runs the whole of it, tickets and session
// alike, in one transaction of its own. Nothing is shared between the two
// transactions: if the call fails, or either node dies, the tickets are as
// the matchmaker left them (SEARCHING, or past their timeout) and the next
// step sends them again; a call the owner already ran finds its tickets
// ended and does nothing, so a call is idempotent on its tickets.

// FleetMatchCall is a matchmaking step that writes a game session of a
// fleet the caller does not own, sent to the fleet's owner. It holds one
// of: a match the matcher found that fills a backfill ticket's session
// (Tickets, Locations), or an automatic backfill ticket past its request
// timeout (TimedOut), whose next ticket the session's MatchmakerData names.
type FleetMatchCall struct {
	Config    string               `json:"Config"`
	Tickets   []matchmaking.Placed `json:"Tickets,omitempty"`
	Locations []string             `json:"Locations,omitempty"`
	TimedOut  string               `json:"TimedOut,omitempty"`
}

// maxCallTickets bounds the tickets of one FleetMatchCall: a match holds
// at most one ticket per player of its rule set (200 at most).
const maxCallTickets = 1000

// SetFleetMatch makes this node send the matchmaking of a game session of
// another node's fleet to that node: m is this node's view of fleet
// ownership, f sends a FleetMatchCall to the node at base (its forwarding
// address, over the node channel). With either nil, every match is made
// here.
func (s *Service) SetFleetMatch(m *owners.Map, f func(ctx context.Context, base string, call *FleetMatchCall) error) {
	s.owners, s.fleetMatch = m, f
}

// elsewhere is the forwarding address of the node owning the fleet of
// game session arn when that is another node this node can send the
// session's matchmaking to, or "". A fleet with no owner known here is
// matched here: nothing is written for a session that has ended, and the
// store refuses a write for a live one, which the next step tries again.
func (s *Service) elsewhere(arn string) string {
	if s.fleetMatch == nil || s.owners == nil {
		return ""
	}
	fleetID, _, ok := game.ParseGameSessionARN(arn)
	if !ok {
		return ""
	}
	if base, local := s.owners.Route(fleetID); !local {
		return base
	}
	return ""
}

// sendFleetMatch sends call to the node at base; a failure is logged and
// reported, and the step leaves the tickets for the next one.
func (s *Service) sendFleetMatch(ctx context.Context, base string, call *FleetMatchCall) error {
	err := s.fleetMatch(ctx, base, call)
	if err != nil {
		s.log.Warn("the node owning a game session's fleet did not take its matchmaking; its tickets wait for the next step",
			"configuration", call.Config, "node", base, "err", err)
	}
	return err
}

// RunFleetMatch runs, on the node owning the fleet, a matchmaking step
// another node sent it (FleetMatchCall), in one transaction: the match is
// proposed (and, without acceptance, its backfill filled) if its tickets
// are all still SEARCHING; the timed-out ticket ends, and its session gets
// its next automatic ticket, if it is still active. A step already run, by
// this node or any other, changes nothing. InvalidRequest for a call that
// names tickets of another configuration, or none.
func (s *Service) RunFleetMatch(ctx context.Context, call *FleetMatchCall) error {
	switch {
	case call.TimedOut != "" && len(call.Tickets) == 0:
		return s.mmUpdate(ctx, func(x *mmTx) error {
			t, err := x.tx.GetTicket(call.TimedOut)
			if game.IsKind(err, game.NotFound) {
				return nil // ended and forgotten
			}
			if err != nil {
				return err
			}
			if t.ConfigName != game.ResourceID(call.Config, "matchmakingconfiguration") || !t.AutoBackfill {
				return game.Errorf(game.InvalidRequest, "ticket %s is not an automatic backfill ticket of %s", t.ID, call.Config)
			}
			if t.Status != game.TicketQueued && t.Status != game.TicketSearching {
				return nil
			}
			c, err := x.tx.GetMatchConfig(t.ConfigName)
			if err != nil {
				return err
			}
			return x.timeOut(c, t)
		})
	case call.TimedOut == "" && len(call.Tickets) > 0 && len(call.Tickets) <= maxCallTickets:
		fm := matchmaking.Match{Tickets: call.Tickets, Locations: call.Locations}
		ids := make([]string, len(fm.Tickets))
		for i, p := range fm.Tickets {
			ids[i] = p.TicketID
		}
		return s.mmUpdate(ctx, func(x *mmTx) error {
			c, rs, err := s.configAndRules(x.tx, call.Config)
			if err != nil {
				return err
			}
			ts, err := x.tickets(ids)
			if err != nil {
				return err
			}
			for _, t := range ts {
				if t.ConfigName != c.Name {
					return game.Errorf(game.InvalidRequest, "ticket %s is not a ticket of %s", t.ID, c.Name)
				}
			}
			_, err = x.propose(c, rs, fm)
			return err
		})
	}
	return game.Errorf(game.InvalidRequest, "a matchmaking call names one timed-out ticket, or 1 to %d tickets of a match", maxCallTickets)
}
