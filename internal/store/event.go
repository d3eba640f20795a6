package store

// EventTx reads and writes event records.
type EventTx interface {
}
