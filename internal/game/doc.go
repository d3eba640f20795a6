// Package game is Anylift's domain vocabulary: the records the service keeps
// (locations, fleets, computes, aliases, game and player sessions, fleet
// events, tags), their statuses and the rules between them, identifiers and
// ARNs, and the closed set of error kinds. It depends on the standard
// library only; storage, wire and transport depend on it, never the reverse.
package game
