package store

import (
	"time"

	"github.com/anylift/anylift/internal/game"
)

// MatchmakerTx reads and writes matchmaking configurations, tickets and
// matches. Reads of single records inside Update lock them, so a status
// change is a read-check-write in one transaction: two nodes never move
// the same ticket twice.
type MatchmakerTx interface {
	// InsertMatchConfig adds c; Conflict when the name is taken.
	InsertMatchConfig(c *game.MatchmakingConfiguration) error
	// GetMatchConfig returns the configuration; NotFound when absent.
	GetMatchConfig(name string) (*game.MatchmakingConfiguration, error)
	// UpdateMatchConfig rewrites c; NotFound when absent.
	UpdateMatchConfig(c *game.MatchmakingConfiguration) error
	// DeleteMatchConfig removes the configuration; NotFound when absent.
	DeleteMatchConfig(name string) error
	// ListMatchConfigs lists configurations in creation order, a page at
	// a time; ruleSet, when not empty, keeps those using that rule set.
	ListMatchConfigs(ruleSet string, p Page) (list []*game.MatchmakingConfiguration, next string, err error)
	// CountMatchConfigs returns how many configurations exist.
	CountMatchConfigs() (int, error)

	// InsertTicket adds t; Conflict when the id is taken.
	InsertTicket(t *game.MatchTicket) error
	// GetTicket returns the ticket; NotFound when absent.
	GetTicket(id string) (*game.MatchTicket, error)
	// UpdateTicket rewrites t; NotFound when absent.
	UpdateTicket(t *game.MatchTicket) error
	// ListTickets lists up to limit tickets of a configuration in one
	// status, oldest first, starting after the ticket id after.
	ListTickets(config, status string, after string, limit int) ([]*game.MatchTicket, error)
	// ListDueTickets lists up to limit active tickets of a configuration
	// in status whose deadline is at or before now.
	ListDueTickets(config, status string, now time.Time, limit int) ([]*game.MatchTicket, error)
	// CountActiveTickets counts a configuration's tickets still being
	// processed.
	CountActiveTickets(config string) (int, error)
	// RecentWaits returns StartTime-to-EndTime of up to limit of the
	// configuration's most recently COMPLETED tickets.
	RecentWaits(config string, limit int) ([]time.Duration, error)
	// ActiveTicketsOfPlayer lists the active tickets holding the player.
	ActiveTicketsOfPlayer(playerID string) ([]*game.MatchTicket, error)

	// DeleteEndedTickets removes up to limit tickets that ended before
	// before (and finished matches whose deadline is before it); it
	// answers how many tickets went.
	DeleteEndedTickets(before time.Time, limit int) (int, error)

	// InsertMatch adds m.
	InsertMatch(m *game.Match) error
	// GetMatch returns the match; NotFound when absent.
	GetMatch(id string) (*game.Match, error)
	// UpdateMatch rewrites m; NotFound when absent.
	UpdateMatch(m *game.Match) error
	// ListDueAcceptances lists up to limit matches of a configuration
	// awaiting acceptance whose window closed at or before now.
	ListDueAcceptances(config string, now time.Time, limit int) ([]*game.Match, error)

	// LeaseMatchmaker makes owner the matchmaker of a configuration until
	// until, if nobody else holds an unexpired lease at now.
	LeaseMatchmaker(config, owner string, now, until time.Time) (bool, error)
}
