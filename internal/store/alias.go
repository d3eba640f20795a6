package store

// AliasTx reads and writes alias records.
type AliasTx interface {
}
