package store

import "github.com/anylift/anylift/internal/game"

// Change is one committed write that the live state in memory follows:
// a game session written, a session's seat count changed, a fleet added
// or removed, a server process written. A store that feeds a commit hook
// (sqldb.DB.SetCommitHook) reports every such write of a transaction, in
// the order it was made, once the transaction has committed; a
// transaction that fails or rolls back reports nothing. On SQLite the
// transactions reach the hook in commit order; on PostgreSQL, which
// commits on many connections at once, two transactions that wrote the
// same row may reach it in either order, and Version says which write is
// the newer.
type Change struct {
	Kind ChangeKind
	// ID is the game session's ARN (SessionPut, SessionSeats), the
	// fleet id (FleetPut, FleetDelete) or the process's fleet id
	// (ProcessPut).
	ID string
	// PK is the session's row key, the tie-breaker of every session order
	// and part of its pagination tokens (SessionPut).
	PK int64
	// Session is a copy of the record as written (SessionPut); its
	// CurrentPlayerSessionCount is the stored count at that moment.
	Session *game.GameSession
	// Seats is the session's CurrentPlayerSessionCount after the change
	// (SessionSeats).
	Seats int
	// Process is a copy of the process record as it now reads
	// (ProcessPut): GetProcess would answer the same fields.
	Process *game.Process
	// Held is how many of the seats this change takes were held in memory
	// before the transaction ran (SessionSeats written by
	// AddReservations): the memory releases its hold on them as it counts
	// them, in the same step.
	Held int
	// Ended reports, when the live state is loaded (FleetPut), that the
	// fleet has game sessions that ended (TERMINATED or ERROR).
	Ended bool
	// Version is the row's count of writes after this one (SessionPut,
	// SessionSeats, ProcessPut): each write of a game session or process
	// row adds one, so of two changes of one row the higher is the newer.
	// 0 for a row not written since versions were counted, or a change
	// from a source that does not count them.
	Version int64
}

// ChangeKind says what a Change is.
type ChangeKind uint8

// The kinds of Change.
const (
	SessionPut ChangeKind = iota + 1
	SessionSeats
	FleetPut
	FleetDelete
	// ProcessPut: a server process was inserted or changed (PutProcess,
	// ClaimFreeProcess, ReleaseNodeProcesses).
	ProcessPut
)
