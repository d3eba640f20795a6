package store

// ComputeTx reads and writes compute records.
type ComputeTx interface {
}
