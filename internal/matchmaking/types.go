// Package matchmaking is the FlexMatch matcher: a pure function from a rule
// set, a pool of tickets and the current time to proposed matches.
// It knows nothing of the store, the API or
// events; the caller owns the pool, commits the matches it accepts, and
// calls Find again on the next tick.
package matchmaking

import (
	"time"

	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// Ticket is one matchmaking request in the pool: a party that is matched
// whole onto one team.
type Ticket struct {
	ID        string
	StartTime time.Time // expansions count the ticket's age from here
	Players   []Player
	// Backfill marks a backfill ticket: its players are already in a game
	// on their Team; it may only gain new tickets, never join another
	// backfill ticket, and never completes alone.
	Backfill bool
}

// Player is one player of a ticket.
type Player struct {
	ID         string
	Attributes map[string]ruleset.Value // as submitted; defaults are applied here
	LatencyMs  map[string]int           // location → latency; may be empty
	Team       string                   // backfill tickets only: the current team instance
}

// Match is a proposed match.
type Match struct {
	// Tickets holds the tickets in the order they joined; the anchor (the
	// ticket the match was built around) is first.
	Tickets []Placed
	// Locations are the locations acceptable to every ticket, best first
	// (lowest worst-case latency); nil when no ticket reported latency.
	Locations []string
}

// Placed is a ticket of a match and the team instance its players are on.
type Placed struct {
	TicketID string
	Team     string
}

// Options tune Find. The zero value is usable.
type Options struct {
	// AdditionalPlayerCount slots are kept free in new matches
	// (MatchmakingConfiguration.AdditionalPlayerCount).
	AdditionalPlayerCount int
	// Seed drives the random batching preference; equal seeds give equal
	// results.
	Seed int64
	// BatchSize caps the tickets considered together (1000).
	BatchSize int
}
