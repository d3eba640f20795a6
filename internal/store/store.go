// Package store is the contract between the application and its storage:
// a Store runs transactions, a Tx reads and writes domain records. Two
// backends implement it over one SQL core (sqldb): SQLite, the embedded
// default (sqlite), and PostgreSQL for several nodes (postgres). The
// conformance suite in storetest runs on both.
//
// Errors: a missing record is a *game.Error of kind game.NotFound, a
// duplicate key one of kind game.Conflict; anything else is a fault.
package store

import (
	"context"
	"time"
)

// Store runs transactions. Nothing written in Update is visible to others,
// or acknowledged to a caller, before Update returns nil.
type Store interface {
	// Update runs fn in a read-write transaction and commits it when fn
	// returns nil; otherwise it rolls back and returns fn's error. fn may be
	// run more than once when the backend asks for a retry (serialization
	// failures), so it must not have effects outside the Tx.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Close releases the store's connections.
	Close() error
}

// Tx is one transaction. Inside Update, reads of single records lock them
// for the rest of the transaction (on PostgreSQL, SELECT ... FOR UPDATE;
// SQLite has a single writer), so read-modify-write is safe.
type Tx interface {
	LocationTx
	FleetTx
	ComputeTx
	AliasTx
	GameSessionTx
	PlayerSessionTx
	EventTx
	TagTx
	ProcessTx
	SearchTx
	OutboxTx
	WebhookTx
	QueueTx
	MetricsTx
	MatchmakingTx
	QueueMetricsTx
	NodeTx
	MatchmakerTx
	ContainerGroupTx
	ScalingPolicyTx
}

// Page asks for one page of a list: at most Limit items after the opaque
// cursor Token (empty: from the start).
type Page struct {
	Limit int
	Token string
}

// RequestPage is the page a request's MaxResults/Limit and NextToken ask for.
func RequestPage(limit *int32, token *string) Page {
	p := Page{}
	if limit != nil {
		p.Limit = int(*limit)
	}
	if token != nil {
		p.Token = *token
	}
	return p
}

// Millis converts a time to the milliseconds stored in the database.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis is the inverse of Millis.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
