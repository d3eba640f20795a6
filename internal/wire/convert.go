package wire

import "github.com/anylift/anylift/internal/game"

// GameTags is a request's tags as records.
func GameTags(in []Tag) []game.Tag {
	out := make([]game.Tag, 0, len(in))
	for _, t := range in {
		out = append(out, game.Tag{Key: Deref(t.Key), Value: Deref(t.Value)})
	}
	return out
}

// GameProperties is a request's game properties as records.
func GameProperties(in []GameProperty) []game.Property {
	out := make([]game.Property, 0, len(in))
	for _, p := range in {
		out = append(out, game.Property{Key: Deref(p.Key), Value: Deref(p.Value)})
	}
	return out
}
