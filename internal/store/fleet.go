package store

// FleetTx reads and writes fleet records.
type FleetTx interface {
}
