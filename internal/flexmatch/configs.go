package flexmatch

import (
	"context"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// MaxMatchConfigs is the per-Region quota of matchmaking configurations.
const MaxMatchConfigs = 100

// CreateMatchmakingConfiguration stores a configuration over an existing
// rule set (and, WITH_QUEUE, existing queues) with its tags. The mode
// rules of spec §3 answer InvalidRequest; an unknown rule set or queue
// NotFound; a taken name InvalidRequest; past MaxMatchConfigs
// LimitExceeded.
func (s *Service) CreateMatchmakingConfiguration(ctx context.Context, in *wire.CreateMatchmakingConfigurationInput) (*wire.CreateMatchmakingConfigurationOutput, error) {
	c := &game.MatchmakingConfiguration{
		Name: wire.Deref(in.Name), Description: wire.Deref(in.Description), QueueARNs: in.GameSessionQueueArns,
		RequestTimeoutSeconds: int(wire.Deref(in.RequestTimeoutSeconds)), AcceptanceRequired: wire.Deref(in.AcceptanceRequired),
		AcceptanceTimeoutSeconds: int(wire.Deref(in.AcceptanceTimeoutSeconds)), RuleSetName: game.ResourceID(wire.Deref(in.RuleSetName), "matchmakingruleset"),
		NotificationTarget: wire.Deref(in.NotificationTarget), AdditionalPlayerCount: int(wire.Deref(in.AdditionalPlayerCount)),
		CustomEventData: wire.Deref(in.CustomEventData), Properties: wire.GameProperties(in.GameProperties),
		GameSessionData: wire.Deref(in.GameSessionData), BackfillMode: wire.Deref(in.BackfillMode),
		FlexMatchMode: wire.Deref(in.FlexMatchMode), CreationTime: s.clock(),
	}
	if c.Name == "" {
		return nil, game.Errorf(game.InvalidRequest, "Name must not be empty")
	}
	arn := s.cfg.Account.MatchmakingConfigurationARN(c.Name)
	err := s.update(ctx, func(tx store.Tx) error {
		if err := s.checkMatchConfig(tx, c); err != nil {
			return err
		}
		n, err := tx.CountMatchConfigs()
		if err != nil {
			return err
		}
		if n >= MaxMatchConfigs {
			return game.Errorf(game.LimitExceeded, "a Region holds at most %d matchmaking configurations", MaxMatchConfigs)
		}
		if err := tx.InsertMatchConfig(c); game.IsKind(err, game.Conflict) {
			return game.Errorf(game.InvalidRequest, "matchmaking configuration %s already exists", c.Name)
		} else if err != nil {
			return err
		}
		return tx.PutTags(arn, wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateMatchmakingConfigurationOutput{Configuration: s.matchConfigOut(c)}, nil
}

// checkMatchConfig fills defaults into c and checks the rules the model
// cannot express (spec §3): the rule set and queues exist, queues only
// and always WITH_QUEUE, no placement settings in STANDALONE, an
// acceptance timeout when acceptance is required, free slots below the
// rule set's capacity. Queue references are stored as ARNs.
func (s *Service) checkMatchConfig(tx store.Tx, c *game.MatchmakingConfiguration) error {
	if c.FlexMatchMode == "" {
		c.FlexMatchMode = game.FlexMatchWithQueue
	}
	if c.BackfillMode == "" {
		c.BackfillMode = game.BackfillManual
	}
	rsRec, err := tx.GetRuleSet(c.RuleSetName)
	if err != nil {
		return err
	}
	rs, err := parseRuleSet(rsRec.Body)
	if err != nil {
		return err
	}
	if c.AcceptanceRequired && c.AcceptanceTimeoutSeconds == 0 {
		return game.Errorf(game.InvalidRequest, "AcceptanceTimeoutSeconds is required when AcceptanceRequired is true")
	}
	if c.AdditionalPlayerCount >= rs.Capacity() && c.AdditionalPlayerCount > 0 {
		return game.Errorf(game.InvalidRequest, "AdditionalPlayerCount %d must be less than the rule set's %d player slots",
			c.AdditionalPlayerCount, rs.Capacity())
	}
	if c.FlexMatchMode == game.FlexMatchStandalone {
		switch {
		case len(c.QueueARNs) > 0:
			return game.Errorf(game.InvalidRequest, "GameSessionQueueArns must not be set when FlexMatchMode is STANDALONE")
		case c.BackfillMode == game.BackfillAutomatic:
			return game.Errorf(game.InvalidRequest, "BackfillMode AUTOMATIC is not available when FlexMatchMode is STANDALONE")
		case len(c.Properties) > 0 || c.GameSessionData != "" || c.AdditionalPlayerCount > 0:
			return game.Errorf(game.InvalidRequest, "GameProperties, GameSessionData and AdditionalPlayerCount are not used when FlexMatchMode is STANDALONE")
		}
		return nil
	}
	if len(c.QueueARNs) == 0 {
		return game.Errorf(game.InvalidRequest, "GameSessionQueueArns is required when FlexMatchMode is WITH_QUEUE")
	}
	for i, ref := range c.QueueARNs {
		q, err := tx.GetQueue(game.ResourceID(ref, "gamesessionqueue"))
		if err != nil {
			return err
		}
		c.QueueARNs[i] = q.ARN
	}
	return nil
}

// DescribeMatchmakingConfigurations returns the named configurations
// (those that exist), those using a rule set, or all, a page at a time
// (Limit 1–10, default 10).
func (s *Service) DescribeMatchmakingConfigurations(ctx context.Context, in *wire.DescribeMatchmakingConfigurationsInput) (*wire.DescribeMatchmakingConfigurationsOutput, error) {
	if l := wire.Deref(in.Limit); l > 10 {
		return nil, game.Errorf(game.InvalidRequest, "Limit must be at most 10")
	}
	ruleSet := game.ResourceID(wire.Deref(in.RuleSetName), "matchmakingruleset")
	out := &wire.DescribeMatchmakingConfigurationsOutput{Configurations: []wire.MatchmakingConfiguration{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if len(in.Names) == 0 {
			list, next, err := tx.ListMatchConfigs(ruleSet, store.RequestPage(in.Limit, in.NextToken))
			for _, c := range list {
				out.Configurations = append(out.Configurations, *s.matchConfigOut(c))
			}
			out.NextToken = wire.String(next)
			return err
		}
		seen := map[string]bool{}
		for _, ref := range in.Names {
			name := game.ResourceID(ref, "matchmakingconfiguration")
			if seen[name] {
				continue
			}
			seen[name] = true
			c, err := tx.GetMatchConfig(name)
			if game.IsKind(err, game.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if ruleSet == "" || c.RuleSetName == ruleSet {
				out.Configurations = append(out.Configurations, *s.matchConfigOut(c))
			}
		}
		return nil
	})
	return out, err
}

// UpdateMatchmakingConfiguration changes the given members of a
// configuration (name or ARN); the result obeys the same rules as
// Create. Tickets in the pool are matched with the new settings from
// then on; proposed matches keep theirs.
func (s *Service) UpdateMatchmakingConfiguration(ctx context.Context, in *wire.UpdateMatchmakingConfigurationInput) (*wire.UpdateMatchmakingConfigurationOutput, error) {
	var c *game.MatchmakingConfiguration
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.GetMatchConfig(game.ResourceID(*in.Name, "matchmakingconfiguration")); err != nil {
			return err
		}
		applyMatchConfigUpdate(c, in)
		if err := s.checkMatchConfig(tx, c); err != nil {
			return err
		}
		return tx.UpdateMatchConfig(c)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateMatchmakingConfigurationOutput{Configuration: s.matchConfigOut(c)}, nil
}

func applyMatchConfigUpdate(c *game.MatchmakingConfiguration, in *wire.UpdateMatchmakingConfigurationInput) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	seti := func(dst *int, v *int32) {
		if v != nil {
			*dst = int(*v)
		}
	}
	set(&c.Description, in.Description)
	set(&c.NotificationTarget, in.NotificationTarget)
	set(&c.CustomEventData, in.CustomEventData)
	set(&c.GameSessionData, in.GameSessionData)
	set(&c.BackfillMode, in.BackfillMode)
	set(&c.FlexMatchMode, in.FlexMatchMode)
	seti(&c.RequestTimeoutSeconds, in.RequestTimeoutSeconds)
	seti(&c.AcceptanceTimeoutSeconds, in.AcceptanceTimeoutSeconds)
	seti(&c.AdditionalPlayerCount, in.AdditionalPlayerCount)
	if in.RuleSetName != nil {
		c.RuleSetName = game.ResourceID(*in.RuleSetName, "matchmakingruleset")
	}
	if in.AcceptanceRequired != nil {
		c.AcceptanceRequired = *in.AcceptanceRequired
	}
	if in.GameSessionQueueArns != nil {
		c.QueueARNs = in.GameSessionQueueArns
	} else if wire.Deref(in.FlexMatchMode) == game.FlexMatchStandalone {
		c.QueueARNs = nil // switching to STANDALONE drops the queues
	}
	if in.GameProperties != nil {
		c.Properties = wire.GameProperties(in.GameProperties)
	}
}

// DeleteMatchmakingConfiguration removes a configuration (name or ARN)
// and its tags; NotFound when absent, InvalidRequest while any of its
// tickets is still being processed.
func (s *Service) DeleteMatchmakingConfiguration(ctx context.Context, in *wire.DeleteMatchmakingConfigurationInput) (*wire.DeleteMatchmakingConfigurationOutput, error) {
	name := game.ResourceID(*in.Name, "matchmakingconfiguration")
	err := s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetMatchConfig(name); err != nil {
			return err
		}
		n, err := tx.CountActiveTickets(name)
		if err != nil {
			return err
		}
		if n > 0 {
			return game.Errorf(game.InvalidRequest, "matchmaking configuration %s has %d active matchmaking tickets", name, n)
		}
		if err := tx.DeleteMatchConfig(name); err != nil {
			return err
		}
		return tx.DeleteAllTags(s.cfg.Account.MatchmakingConfigurationARN(name))
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeleteMatchmakingConfigurationOutput{}, nil
}

func (s *Service) matchConfigOut(c *game.MatchmakingConfiguration) *wire.MatchmakingConfiguration {
	out := &wire.MatchmakingConfiguration{
		Name: wire.String(c.Name), ConfigurationArn: wire.String(s.cfg.Account.MatchmakingConfigurationARN(c.Name)),
		Description: wire.String(c.Description), GameSessionQueueArns: c.QueueARNs,
		RequestTimeoutSeconds: wire.Int32(c.RequestTimeoutSeconds), AcceptanceRequired: wire.Bool(c.AcceptanceRequired),
		RuleSetName: wire.String(c.RuleSetName), RuleSetArn: wire.String(s.cfg.Account.MatchmakingRuleSetARN(c.RuleSetName)),
		NotificationTarget: wire.String(c.NotificationTarget), AdditionalPlayerCount: wire.Int32(c.AdditionalPlayerCount),
		CustomEventData: wire.String(c.CustomEventData), CreationTime: wire.NewTime(c.CreationTime),
		GameSessionData: wire.String(c.GameSessionData), BackfillMode: wire.String(c.BackfillMode),
		FlexMatchMode: wire.String(c.FlexMatchMode),
	}
	if c.AcceptanceTimeoutSeconds > 0 {
		out.AcceptanceTimeoutSeconds = wire.Int32(c.AcceptanceTimeoutSeconds)
	}
	for _, p := range c.Properties {
		out.GameProperties = append(out.GameProperties, wire.GameProperty{Key: wire.String(p.Key), Value: wire.String(p.Value)})
	}
	return out
}
