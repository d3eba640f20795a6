package store

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
)

// SearchQuery is one SearchGameSessions request, parsed: which sessions
// (always ACTIVE ones of one fleet) and in what order.
type SearchQuery struct {
	FleetID  string
	Location string       // empty: every location of the fleet
	Filter   search.Expr  // nil: every ACTIVE session
	Sort     *search.Sort // nil: creation order (oldest first)
}

// SearchTx searches game sessions.
type SearchTx interface {
	// SearchGameSessions returns one page of the ACTIVE sessions that
	// match q, at most p.Limit (20 when not positive). The search runs
	// in the database. Order: q.Sort, with sessions lacking a sorted
	// property last; ties by creation time then insertion, in the sort's
	// direction. A session lacking a property matches no comparison on
	// it (= and <> alike); NOT inverts the result. next is empty on the
	// last page; a token from another query (fleet, location, filter or
	// sort) is InvalidRequest.
	SearchGameSessions(q SearchQuery, p Page) (list []*game.GameSession, next string, err error)
}
