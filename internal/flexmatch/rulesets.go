package flexmatch

import (
	"context"
	"errors"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// MaxRuleSets is the per-Region quota of matchmaking rule sets
// (a quota exists, its default is unpublished).
const MaxRuleSets = 100

// ValidateMatchmakingRuleSet checks a rule set body (spec §4.11). A valid
// body answers Valid: true; an invalid one InvalidRequest naming the first
// problem, except a body that is JSON but not an object, which answers
// Valid: false.
func (s *Service) ValidateMatchmakingRuleSet(ctx context.Context, in *wire.ValidateMatchmakingRuleSetInput) (*wire.ValidateMatchmakingRuleSetOutput, error) {
	_, err := ruleset.Parse(*in.RuleSetBody)
	var re *ruleset.Error
	if errors.As(err, &re) && re.NotObject {
		return &wire.ValidateMatchmakingRuleSetOutput{Valid: wire.Bool(false)}, nil
	}
	if err != nil {
		return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
	}
	return &wire.ValidateMatchmakingRuleSetOutput{Valid: wire.Bool(true)}, nil
}

// parseRuleSet loads body; a bad body is InvalidRequest with the loader's
// message.
func parseRuleSet(body string) (*ruleset.RuleSet, error) {
	rs, err := ruleset.Parse(body)
	if err != nil {
		return nil, game.Errorf(game.InvalidRequest, "%s", err.Error())
	}
	return rs, nil
}

// CreateMatchmakingRuleSet validates and stores a rule set under a new
// name, with its tags. The body is kept byte for byte. InvalidRequest for
// a bad body or a taken name; LimitExceeded past MaxRuleSets.
func (s *Service) CreateMatchmakingRuleSet(ctx context.Context, in *wire.CreateMatchmakingRuleSetInput) (*wire.CreateMatchmakingRuleSetOutput, error) {
	if *in.Name == "" {
		return nil, game.Errorf(game.InvalidRequest, "Name must not be empty")
	}
	if _, err := parseRuleSet(*in.RuleSetBody); err != nil {
		return nil, err
	}
	rs := &game.MatchmakingRuleSet{Name: *in.Name, ARN: s.cfg.Account.MatchmakingRuleSetARN(*in.Name),
		Body: *in.RuleSetBody, CreationTime: s.clock()}
	err := s.update(ctx, func(tx store.Tx) error {
		n, err := tx.CountRuleSets()
		if err != nil {
			return err
		}
		if n >= MaxRuleSets {
			return game.Errorf(game.LimitExceeded, "a Region holds at most %d matchmaking rule sets", MaxRuleSets)
		}
		if err := tx.InsertRuleSet(rs); game.IsKind(err, game.Conflict) {
			return game.Errorf(game.InvalidRequest, "matchmaking rule set %s already exists", rs.Name)
		} else if err != nil {
			return err
		}
		return tx.PutTags(rs.ARN, wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateMatchmakingRuleSetOutput{RuleSet: s.ruleSetOut(rs)}, nil
}

// DescribeMatchmakingRuleSets returns the named rule sets (names or ARNs;
// those that exist, NotFound when none does), or all of them a page at a
// time (Limit 1–10, default 10).
func (s *Service) DescribeMatchmakingRuleSets(ctx context.Context, in *wire.DescribeMatchmakingRuleSetsInput) (*wire.DescribeMatchmakingRuleSetsOutput, error) {
	out := &wire.DescribeMatchmakingRuleSetsOutput{RuleSets: []wire.MatchmakingRuleSet{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if len(in.Names) > 0 {
			return s.describeNamedRuleSets(tx, in.Names, out)
		}
		list, next, err := tx.ListRuleSets(store.RequestPage(in.Limit, in.NextToken))
		for _, rs := range list {
			out.RuleSets = append(out.RuleSets, *s.ruleSetOut(rs))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

func (s *Service) describeNamedRuleSets(tx store.Tx, names []string, out *wire.DescribeMatchmakingRuleSetsOutput) error {
	seen := map[string]bool{}
	for _, ref := range names {
		name := game.ResourceID(ref, "matchmakingruleset")
		if seen[name] {
			continue
		}
		seen[name] = true
		rs, err := tx.GetRuleSet(name)
		if game.IsKind(err, game.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		out.RuleSets = append(out.RuleSets, *s.ruleSetOut(rs))
	}
	if len(out.RuleSets) == 0 {
		return game.Errorf(game.NotFound, "no matchmaking rule set found with the given names")
	}
	return nil
}

// DeleteMatchmakingRuleSet removes a rule set (name or ARN) and its tags.
// NotFound when absent; InvalidRequest while a matchmaking configuration
// uses it.
func (s *Service) DeleteMatchmakingRuleSet(ctx context.Context, in *wire.DeleteMatchmakingRuleSetInput) (*wire.DeleteMatchmakingRuleSetOutput, error) {
	name := game.ResourceID(*in.Name, "matchmakingruleset")
	err := s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetRuleSet(name); err != nil {
			return err
		}
		if err := ruleSetInUse(tx, name); err != nil {
			return err
		}
		if err := tx.DeleteRuleSet(name); err != nil {
			return err
		}
		return tx.DeleteAllTags(s.cfg.Account.MatchmakingRuleSetARN(name))
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeleteMatchmakingRuleSetOutput{}, nil
}

// ruleSetInUse answers InvalidRequest when a matchmaking configuration uses
// the rule set.
func ruleSetInUse(tx store.Tx, name string) error {
	list, _, err := tx.ListMatchConfigs(name, store.Page{Limit: 1})
	if err != nil {
		return err
	}
	if len(list) > 0 {
		return game.Errorf(game.InvalidRequest, "matchmaking rule set %s is used by matchmaking configuration %s", name, list[0].Name)
	}
	return nil
}

func (s *Service) ruleSetOut(rs *game.MatchmakingRuleSet) *wire.MatchmakingRuleSet {
	return &wire.MatchmakingRuleSet{
		RuleSetName:  wire.String(rs.Name),
		RuleSetArn:   wire.String(s.cfg.Account.MatchmakingRuleSetARN(rs.Name)),
		RuleSetBody:  wire.String(rs.Body),
		CreationTime: wire.NewTime(rs.CreationTime),
	}
}
