package store

// GameSessionTx reads and writes gamesession records.
type GameSessionTx interface {
}
