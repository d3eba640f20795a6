package store

// PlayerSessionTx reads and writes playersession records.
type PlayerSessionTx interface {
}
