// Package sqldb is the SQL core both backends share: transactions, the
// migration runner, cursors, and the queries behind store.Tx. Queries are
// written once with '?' placeholders; the PostgreSQL dialect rebinds them.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Dialect is what differs between the backends.
type Dialect struct {
	Name string
	// Numbered rewrites '?' placeholders as $1, $2, ...
	Numbered bool
	// ForUpdate is appended to single-record reads inside Update.
	ForUpdate string
	// IsUnique reports a unique-constraint violation.
	IsUnique func(error) bool
	// IsRetryable reports a failure after which the whole transaction may
	// be run again (serialization failure, deadlock, busy).
	IsRetryable func(error) bool
	// Pipeline, when set, sends stmts on driverConn in one round trip and
	// runs them in order, stopping at the first that fails: it reports
	// that one's index and error (pipeline.go). Grouped writes use it;
	// their transaction's BEGIN and COMMIT go in pipelines too.
	Pipeline func(ctx context.Context, driverConn any, stmts []Statement) (failed int, err error)
}

// DB is a store.Store over database/sql.
type DB struct {
	write *sql.DB
	read  *sql.DB
	// beat, when set, is a pool of its own for the node heartbeat
	// (UpdateBeat), so that requests queued for the shared pool never
	// make a busy node look cut off from its database.
	beat    *sql.DB
	dialect *Dialect
	queries sync.Map // query text → rebound text
	stmts   sync.Map // stmtKey → *sql.Stmt (nil while being prepared)
	nstmts  atomic.Int64
	// preparing tracks background preparations; Close waits for them.
	preparing sync.WaitGroup

	// Group commit (EnableGroupCommit): jobs feeds the committer, stop
	// ends it, committerDone closes when it has.
	jobs          chan *job
	stop          chan struct{}
	committerDone chan struct{}

	// hook receives committed changes (feed.go); commitMu orders commits
	// and their hook calls outside group commit, on SQLite; flights
	// tracks the write transactions that may still reach the hook
	// (flights.go).
	hook     atomic.Pointer[func([]store.Change)]
	commitMu sync.Mutex
	flights  flights
	// free answers claims of free processes when set, for the fleets
	// freeHolds reports when that is set too (freeprocs.go).
	free      store.LiveProcesses
	freeHolds func(fleetID string) bool
	// sessions answers reads of live game sessions inside writes when
	// set, for the same fleets as free (memsessions.go).
	sessions store.LiveSessionRecords
	// sessionKeys are row keys of game_sessions taken ahead from its
	// sequence, for grouped writes on PostgreSQL (sessionkeys.go).
	sessionKeys []int64
	// owners, when set, is this node's view of the fleets it owns, which
	// every write for a fleet is checked against (owners.go).
	owners atomic.Pointer[Owners]
	// counts answers the fleet metrics' count of live sessions when set
	// (SetLiveSessionCounts).
	counts store.LiveSessionCounts

	// records keeps fleets and computes between write transactions
	// (KeepRecords; docs.go).
	records *recordDocs
	// placementDocs keeps placements decoded, by id (placementdocs.go).
	placementDocs decodedDocs[game.Placement]
	// placed keeps placed placements in flight (placed.go).
	placed placedMemory
	// queueDocs keeps queues decoded, by name (GetQueue).
	queueDocs decodedDocs[game.Queue]
	// computeDocs keeps computes decoded, whatever the store, by key
	// (GetCompute): decoding them was 8 % of an owning node's CPU in a
	// queue placement once placements were kept decoded.
	computeDocs decodedDocs[game.Compute]

	// closers run after the pools close (OnClose).
	closers []func() error

	// horizon: how far the outbox may be read (PostgreSQL; horizon.go).
	horizon outboxHorizon
}

// OnClose makes Close run fn after closing the pools (a backend's lock,
// for instance). Call it before the DB is shared.
func (db *DB) OnClose(fn func() error) { db.closers = append(db.closers, fn) }

// stmtKey names a prepared statement: the same text is prepared once on
// each pool (and by database/sql once on each of its connections).
type stmtKey struct {
	pool *sql.DB
	q    string
}

// maxStmts bounds the statement cache: queries built at run time (search
// filters) beyond it are run unprepared.
const maxStmts = 1024

// New returns a DB that writes through write and reads through read (they
// may be the same pool).
func New(write, read *sql.DB, d Dialect) *DB {
	return &DB{write: write, read: read, dialect: &d, stop: make(chan struct{}),
		placementDocs: newDecodedDocs(maxPlacementDocs, clonePlacement),
		queueDocs:     newDecodedDocs(maxRecordDocs, cloneQueue),
		computeDocs:   newDecodedDocs(maxRecordDocs, copyCompute),
	}
}

var _ store.Store = (*DB)(nil)

// Dialect returns the backend's name ("sqlite" or "postgres").
func (db *DB) Dialect() string { return db.dialect.Name }

// Closing is closed when Close begins.
func (db *DB) Closing() <-chan struct{} { return db.stop }

// Close closes both pools.
func (db *DB) Close() error {
	close(db.stop)
	if db.committerDone != nil {
		<-db.committerDone
	}
	db.preparing.Wait()
	db.stmts.Range(func(_, v any) bool {
		if st, ok := v.(*sql.Stmt); ok && st != nil {
			st.Close()
		}
		return true
	})
	err := db.write.Close()
	if db.beat != nil {
		if e := db.beat.Close(); err == nil {
			err = e
		}
	}
	if db.read != db.write {
		if e := db.read.Close(); err == nil {
			err = e
		}
	}
	for _, fn := range db.closers {
		if e := fn(); err == nil {
			err = e
		}
	}
	return err
}

const maxAttempts = 10

// Update implements store.Store.
func (db *DB) Update(ctx context.Context, fn func(store.Tx) error) error {
	if db.jobs != nil {
		return db.updateBatched(ctx, fn)
	}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		err = db.run(ctx, db.write, false, fn)
		if err == nil || !db.retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// SetBeatPool gives the node heartbeat a pool of its own (UpdateBeat),
// which Close closes. Call it before the DB is shared.
func (db *DB) SetBeatPool(p *sql.DB) { db.beat = p }

// UpdateBeat runs a write transaction for the node heartbeat: on the
// heartbeat's own pool when there is one (SetBeatPool), else as Update.
// A node whose requests hold every connection of the shared pool, all
// waiting on one hot row, still reaches its database for its heartbeat
// and keeps answering, rather than refusing everything as unreachable.
func (db *DB) UpdateBeat(ctx context.Context, fn func(store.Tx) error) error {
	if db.beat == nil {
		return db.Update(ctx, fn)
	}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		err = db.run(ctx, db.beat, false, fn)
		if err == nil || !db.retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// View implements store.Store.
func (db *DB) View(ctx context.Context, fn func(store.Tx) error) error {
	return db.run(ctx, db.read, true, fn)
}

func (db *DB) run(ctx context.Context, pool *sql.DB, readOnly bool, fn func(store.Tx) error) error {
	hook := db.commitHook()
	feed := !readOnly && hook != nil
	if feed {
		ticket := db.flights.begin()
		defer db.flights.end(ticket) // after the hook
	}
	opts := &sql.TxOptions{ReadOnly: readOnly && db.dialect.Name == "postgres"}
	sqlTx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	t := &Tx{tx: sqlTx, db: db, pool: pool, ctx: ctx, writable: !readOnly, feed: feed}
	if !readOnly && db.free != nil {
		// The memory of free processes must not be behind the
		// transaction (freeprocs.go): hold the lock from here.
		db.commitMu.Lock()
		defer db.commitMu.Unlock()
		defer t.batchEnded()
	}
	if err := fn(t); err != nil {
		sqlTx.Rollback()
		t.jobEnded(false)
		return err
	}
	if readOnly {
		return sqlTx.Rollback()
	}
	t.jobEnded(true)
	if hook != nil && db.free == nil && db.dialect.Name != "postgres" {
		// On SQLite the hook hears commits in order. PostgreSQL commits
		// concurrently, and the versions of the rows changed order them
		// for the memory (flights.go).
		db.commitMu.Lock()
		defer db.commitMu.Unlock()
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	t.placedCommitted(true)
	if hook != nil && len(t.changes) > 0 {
		hook(t.changes)
	}
	return nil
}

// rebind rewrites '?' placeholders for numbered dialects, once per query.
func (db *DB) rebind(q string) string {
	if !db.dialect.Numbered {
		return q
	}
	if v, ok := db.queries.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	out := b.String()
	db.queries.Store(q, out)
	return out
}

// runner runs a transaction's statements: its *sql.Tx, or for a
// pipelined transaction the *sql.Conn it holds, on which the pipeline
// sent BEGIN (pipeline.go).
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Tx implements store.Tx.
type Tx struct {
	tx       runner
	db       *DB
	pool     *sql.DB
	ctx      context.Context
	writable bool
	// conn is the transaction's connection when its statements may be
	// pipelined, and pipe what waits to be sent (pipeline.go).
	conn *sql.Conn
	pipe []queued
	// sending and counts are send's buffers, kept for the transaction's
	// next round trip (pipeline.go).
	sending []Statement
	counts  []int64
	// failed is the first failure of a statement the running job queued,
	// which fails the job whatever it made of it (pipeline.go).
	failed error
	// savepoint: the running job's savepoint has been sent; begun: the
	// pipelined transaction's BEGIN has (pipeline.go). spPending: the
	// running job's savepoint is still to be put in the pipeline, at
	// spAt, ahead of the job's statements (batch.go).
	savepoint, begun bool
	spPending        bool
	spAt             int
	// docs: records read in a grouped transaction (docs.go);
	// wroteRecords: this transaction wrote a fleet, a compute or a queue.
	docs         map[string]string
	wroteRecords bool
	// storeQueues: the running job reads queues from the store, not as
	// last read (queues.go): it runs again after its guard failed.
	storeQueues bool
	// feed: note changes for the commit hook (feed.go) in changes.
	feed    bool
	changes []store.Change
	// appending: the transaction holds the outbox's append lock.
	appending bool
	// takes are the processes the running job took from db.free,
	// batchTakes those of the batch's jobs that succeeded, written the
	// processes those jobs wrote (freeprocs.go).
	takes, batchTakes []*game.Process
	written           map[store.ProcessKey]bool
	// known are the game sessions the running job read from memory,
	// writtenSessions those the batch's successful jobs wrote, and
	// memFleets the fleets whose state this transaction read from memory
	// (memsessions.go).
	known map[string]*knownSession
	// lastWrite is the known session's update queued last, while it is
	// still unsent and last in the pipeline (writeKnown).
	lastWrite       *sessionWrite
	writtenSessions map[string]bool
	memFleets       map[string]bool
	// storeFleets: the fleets the memory did not answer for when this
	// transaction first asked, read from the store to its end (memoryFor).
	storeFleets map[string]bool
	// fenced lists the fleets this transaction has checked it owns.
	fenced []string
	// props: the properties each game session read or written here has
	// indexed (sawProperties).
	props map[string]string
	// sends counts the pipelines sent; deferring, that the batch's jobs
	// leave their last queued statements for the next job's first round
	// trip (batch.go).
	sends     int
	deferring bool
	// sent counts the statements this transaction has run or queued,
	// and lastPlayer is the player session the running job read last,
	// with sent as it was then (players.go).
	sent uint64
	// placed: placements in flight written and read from memory (placed.go).
	placed     placedTx
	lastPlayer struct {
		rec  game.PlayerSession
		sent uint64
		ok   bool
	}
}

// stmt returns q prepared for this transaction, or nil the first times
// a query is seen. Parsing a statement costs SQLite more than running a
// point query, so hot statements are prepared once per connection.
//
// A statement cannot be prepared on the pool from inside a transaction:
// on SQLite's single writer connection that would wait for the connection
// the transaction holds. So the first use runs unprepared and asks for the
// statement to be prepared in the background, as soon as a connection is
// free; later uses bind it to their transaction's connection.
func (t *Tx) stmt(q string) *sql.Stmt {
	key := stmtKey{t.pool, q}
	v, ok := t.db.stmts.Load(key)
	if !ok {
		if t.db.nstmts.Load() < maxStmts {
			if _, loaded := t.db.stmts.LoadOrStore(key, nil); !loaded {
				t.db.nstmts.Add(1)
				t.db.prepare(key)
			}
		}
		return nil
	}
	prepared, _ := v.(*sql.Stmt)
	tx, ok := t.tx.(*sql.Tx)
	if prepared == nil || !ok {
		return nil // a pipelined transaction's statements are pgx's to cache
	}
	return tx.StmtContext(t.ctx, prepared)
}

// prepare prepares key's query on its pool in the background.
func (db *DB) prepare(key stmtKey) {
	db.preparing.Add(1)
	go func() {
		defer db.preparing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		prepared, err := key.pool.PrepareContext(ctx, db.rebind(key.q))
		if err != nil {
			return // stays unprepared
		}
		db.stmts.Store(key, prepared)
	}()
}

func (t *Tx) exec(q string, args ...any) (sql.Result, error) {
	t.sent++
	if t.piping() {
		return t.execPiped(q, args)
	}
	if st := t.stmt(q); st != nil {
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, t.db.rebind(q), args...)
}

func (t *Tx) query(q string, args ...any) (*sql.Rows, error) {
	t.sent++
	if err := t.sendQueued(); err != nil {
		return nil, err
	}
	if st := t.stmt(q); st != nil {
		return st.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, t.db.rebind(q), args...)
}

func (t *Tx) queryRow(q string, args ...any) Row {
	t.sent++
	if t.piping() {
		return pipedRow{t, q, args}
	}
	if st := t.stmt(q); st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, t.db.rebind(q), args...)
}

// queryStrings runs q, which selects one text column, and lists it.
func (t *Tx) queryStrings(q string, args ...any) ([]string, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// lock is appended to single-record reads: inside Update on PostgreSQL it
// locks the row until the transaction ends.
func (t *Tx) lock() string {
	if t.writable {
		return t.db.dialect.ForUpdate
	}
	return ""
}

// lockShared is appended to reads of records that many writers read and
// few change (fleets, aliases, computes): on PostgreSQL, FOR SHARE inside
// Update, so concurrent CreateGameSessions on one fleet do not queue
// behind each other, while a change of the record still waits for them.
// Two writers that both upgrade a shared lock deadlock; PostgreSQL
// detects it and Update runs the loser again.
func (t *Tx) lockShared() string {
	if t.writable && t.db.dialect.ForUpdate != "" {
		return " FOR SHARE"
	}
	return ""
}

// isUnique reports a unique-constraint violation.
func (t *Tx) isUnique(err error) bool { return err != nil && t.db.dialect.IsUnique(err) }

// Migrate applies, in name order, every *.sql file of fsys not yet applied,
// each in its own transaction, recording it in schema_migrations. A store
// holding migrations fsys lacks is refused with *SchemaTooNewError.
func (db *DB) Migrate(ctx context.Context, fsys fs.FS) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	// A store a newer anylift has migrated is refused before anything is
	// applied: this binary would misread it.
	if err := db.checkSchema(ctx, fsys); err != nil {
		return err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		// A migration runs beside the nodes of an earlier build still
		// serving from the same database (a rolling upgrade): its ALTER
		// TABLE may deadlock with their transactions, and PostgreSQL
		// rolls it back whole. It is tried again, as any write is.
		var err error
		for attempt := 0; attempt < maxAttempts; attempt++ {
			err = db.migrate(ctx, fsys, name)
			if err == nil || !db.retryable(err) || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) migrate(ctx context.Context, fsys fs.FS, name string) error {
	body, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var seen int
	err = tx.QueryRowContext(ctx, db.rebind(`SELECT COUNT(*) FROM schema_migrations WHERE name = ?`), name).Scan(&seen)
	if err != nil || seen > 0 {
		return err
	}
	for _, stmt := range splitStatements(string(body)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%w\n%s", err, stmt)
		}
	}
	if _, err := tx.ExecContext(ctx, db.rebind(`INSERT INTO schema_migrations (name) VALUES (?)`), name); err != nil {
		return err
	}
	return tx.Commit()
}

// splitStatements splits a migration at semicolons that end a line.
// Migrations hold plain DDL, without procedural bodies.
func splitStatements(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if st := strings.TrimSpace(cur.String()); st != ";" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}

// errNoRows reports sql.ErrNoRows.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// affected reports whether a conditional update changed a row.
func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// requireRow turns an update or delete of no row into NotFound.
func requireRow(res sql.Result, err error, format string, args ...any) error {
	ok, err := affected(res, err)
	if err == nil && !ok {
		return game.Errorf(game.NotFound, format, args...)
	}
	return err
}
