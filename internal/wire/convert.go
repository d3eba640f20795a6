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

// ApplyFleetAttributes sets on f the attributes a create or update request
// gives (nil and empty: left as they are), the ones every kind of fleet
// has.
func ApplyFleetAttributes(f *game.Fleet, protection *string, limit *ResourceCreationLimitPolicy, groups []string) {
	if protection != nil {
		f.NewGameSessionProtectionPolicy = *protection
	}
	if limit != nil {
		if limit.NewGameSessionsPerCreator != nil {
			f.CreationLimit.NewGameSessionsPerCreator = int(*limit.NewGameSessionsPerCreator)
		}
		if limit.PolicyPeriodInMinutes != nil {
			f.CreationLimit.PolicyPeriodInMinutes = int(*limit.PolicyPeriodInMinutes)
		}
	}
	if len(groups) > 0 {
		f.MetricGroups = append([]string(nil), groups...)
	}
}
