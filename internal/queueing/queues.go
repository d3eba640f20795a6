package queueing

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Queue timeouts GameLift documents.
const (
	minQueueTimeout = 10
	maxQueueTimeout = 600
)

// CreateGameSessionQueue creates a queue. Destinations must name existing
// fleets or aliases (NotFound otherwise); a duplicate name is
// InvalidRequest.
func (s *Service) CreateGameSessionQueue(ctx context.Context, in *wire.CreateGameSessionQueueInput) (*wire.CreateGameSessionQueueOutput, error) {
	q := &game.Queue{Name: *in.Name, ARN: s.cfg.Account.QueueARN(*in.Name), TimeoutSeconds: game.DefaultQueueTimeout, CreationTime: s.clock()}
	err := applyQueueInput(q, queueInput{in.TimeoutInSeconds, in.PlayerLatencyPolicies, in.Destinations, in.FilterConfiguration,
		in.PriorityConfiguration, in.CustomEventData, in.NotificationTarget})
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.checkDestinations(tx, q.Destinations); err != nil {
			return err
		}
		if err := tx.InsertQueue(q); game.IsKind(err, game.Conflict) {
			return game.Errorf(game.InvalidRequest, "A game session queue named %s already exists", q.Name)
		} else if err != nil {
			return err
		}
		return tx.PutTags(q.ARN, wire.GameTags(in.Tags))
	})
	if err != nil {
		return nil, err
	}
	return &wire.CreateGameSessionQueueOutput{GameSessionQueue: queueOut(q)}, nil
}

// queueInput is what Create and Update share; nil members are unchanged.
type queueInput struct {
	timeout      *int32
	policies     []wire.PlayerLatencyPolicy
	destinations []wire.GameSessionQueueDestination
	filter       *wire.FilterConfiguration
	priority     *wire.PriorityConfiguration
	customData   *string
	target       *string
}

// applyQueueInput checks in against the rules the model cannot express
// and applies it to q. Lists given replace q's whole list.
func applyQueueInput(q *game.Queue, in queueInput) error {
	if in.timeout != nil {
		t := int(*in.timeout)
		if t != 0 && (t < minQueueTimeout || t > maxQueueTimeout) {
			return game.Errorf(game.InvalidRequest, "TimeoutInSeconds must be between %d and %d, not %d", minQueueTimeout, maxQueueTimeout, t)
		}
		if t == 0 {
			t = game.DefaultQueueTimeout
		}
		q.TimeoutSeconds = t
	}
	if in.policies != nil {
		q.LatencyPolicies = nil
		for i, p := range in.policies {
			if p.MaximumIndividualPlayerLatencyMilliseconds == nil {
				return game.Errorf(game.InvalidRequest, "PlayerLatencyPolicies[%d].MaximumIndividualPlayerLatencyMilliseconds is required", i)
			}
			q.LatencyPolicies = append(q.LatencyPolicies, game.LatencyPolicy{
				MaxLatencyMs: int(*p.MaximumIndividualPlayerLatencyMilliseconds), DurationSeconds: int(wire.Deref(p.PolicyDurationSeconds))})
		}
	}
	if in.destinations != nil {
		q.Destinations = nil
		for i, d := range in.destinations {
			arn := wire.Deref(d.DestinationArn)
			if destinationKind(arn) == "" {
				return game.Errorf(game.InvalidRequest, "Destinations[%d].DestinationArn %q is not a fleet or alias id or ARN", i, arn)
			}
			q.Destinations = append(q.Destinations, arn)
		}
	}
	if in.filter != nil {
		q.AllowedLocations = slices.Clone(in.filter.AllowedLocations)
	}
	if in.priority != nil {
		if err := checkPriority(in.priority); err != nil {
			return err
		}
		q.PriorityOrder, q.LocationOrder = slices.Clone(in.priority.PriorityOrder), slices.Clone(in.priority.LocationOrder)
	}
	if in.customData != nil {
		q.CustomEventData = *in.customData
	}
	if in.target != nil {
		if err := checkTarget(*in.target); err != nil {
			return err
		}
		q.NotificationTarget = *in.target
	}
	return nil
}

// checkTarget accepts an SNS topic ARN (the model's pattern has checked
// it) or an absolute http(s) URL with a host, for webhooks.
func checkTarget(t string) error {
	if !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
		return nil
	}
	u, err := url.Parse(t)
	if err != nil || u.Host == "" || u.User != nil {
		return game.Errorf(game.InvalidRequest, "NotificationTarget must be an SNS topic ARN or an http(s) URL with a host and no credentials")
	}
	return nil
}

// checkPriority: criteria and locations unique; LOCATION needs a
// LocationOrder.
func checkPriority(p *wire.PriorityConfiguration) error {
	if dup, ok := duplicate(p.PriorityOrder); ok {
		return game.Errorf(game.InvalidRequest, "PriorityConfiguration.PriorityOrder lists %s more than once", dup)
	}
	if dup, ok := duplicate(p.LocationOrder); ok {
		return game.Errorf(game.InvalidRequest, "PriorityConfiguration.LocationOrder lists %s more than once", dup)
	}
	if slices.Contains(p.PriorityOrder, game.PriorityLocation) && len(p.LocationOrder) == 0 {
		return game.Errorf(game.InvalidRequest, "PriorityConfiguration.LocationOrder is required when PriorityOrder includes LOCATION")
	}
	return nil
}

func duplicate(list []string) (string, bool) {
	seen := map[string]bool{}
	for _, v := range list {
		if seen[v] {
			return v, true
		}
		seen[v] = true
	}
	return "", false
}

// destinationKind is "fleet" or "alias" for a destination id or ARN, ""
// for anything else.
func destinationKind(idOrARN string) string {
	switch {
	case strings.HasPrefix(idOrARN, game.FleetIDPrefix) || strings.HasPrefix(idOrARN, game.ContainerFleetIDPrefix) ||
		strings.HasPrefix(idOrARN, "arn:") && strings.Contains(idOrARN, ":fleet/"):
		return "fleet"
	case strings.HasPrefix(idOrARN, "alias-") || strings.HasPrefix(idOrARN, "arn:") && strings.Contains(idOrARN, ":alias/"):
		return "alias"
	}
	return ""
}

// checkDestinations answers NotFound for a destination that names no
// fleet or alias.
func (s *Service) checkDestinations(tx store.Tx, dests []string) error {
	for _, d := range dests {
		var err error
		if destinationKind(d) == "fleet" {
			_, err = tx.GetFleet(game.ResourceID(d, "fleet"))
		} else {
			_, err = tx.GetAlias(game.ResourceID(d, "alias"))
		}
		if game.IsKind(err, game.NotFound) {
			return game.Errorf(game.NotFound, "Destination %s: no such fleet or alias", d)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DescribeGameSessionQueues lists the queues named (names or ARNs; unknown
// ones skipped), or all queues a page at a time (Limit up to 50).
func (s *Service) DescribeGameSessionQueues(ctx context.Context, in *wire.DescribeGameSessionQueuesInput) (*wire.DescribeGameSessionQueuesOutput, error) {
	if l := wire.Deref(in.Limit); l < 0 || l > 50 {
		return nil, game.Errorf(game.InvalidRequest, "Limit must be between 1 and 50, not %d", l)
	}
	out := &wire.DescribeGameSessionQueuesOutput{GameSessionQueues: []wire.GameSessionQueue{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if len(in.Names) > 0 {
			for _, n := range in.Names {
				q, err := tx.GetQueue(game.ResourceID(n, "gamesessionqueue"))
				if game.IsKind(err, game.NotFound) {
					continue
				}
				if err != nil {
					return err
				}
				out.GameSessionQueues = append(out.GameSessionQueues, *queueOut(q))
			}
			return nil
		}
		list, next, err := tx.ListQueues(store.RequestPage(in.Limit, in.NextToken))
		for _, q := range list {
			out.GameSessionQueues = append(out.GameSessionQueues, *queueOut(q))
		}
		out.NextToken = wire.String(next)
		return err
	})
	return out, err
}

// UpdateGameSessionQueue changes the members given under CreateGameSessionQueue's
// rules; lists replace the old ones whole, an empty FilterConfiguration or
// PriorityConfiguration removes it.
func (s *Service) UpdateGameSessionQueue(ctx context.Context, in *wire.UpdateGameSessionQueueInput) (*wire.UpdateGameSessionQueueOutput, error) {
	var q *game.Queue
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if q, err = tx.GetQueue(game.ResourceID(*in.Name, "gamesessionqueue")); err != nil {
			return err
		}
		err = applyQueueInput(q, queueInput{in.TimeoutInSeconds, in.PlayerLatencyPolicies, in.Destinations, in.FilterConfiguration,
			in.PriorityConfiguration, in.CustomEventData, in.NotificationTarget})
		if err != nil {
			return err
		}
		if err := s.checkDestinations(tx, q.Destinations); err != nil {
			return err
		}
		return tx.UpdateQueue(q)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UpdateGameSessionQueueOutput{GameSessionQueue: queueOut(q)}, nil
}

// DeleteGameSessionQueue removes a queue and its tags; its PENDING
// placements end FAILED.
func (s *Service) DeleteGameSessionQueue(ctx context.Context, in *wire.DeleteGameSessionQueueInput) (*struct{}, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		q, err := tx.GetQueue(game.ResourceID(*in.Name, "gamesessionqueue"))
		if err != nil {
			return err
		}
		// The row first: on PostgreSQL its delete waits for every start
		// that holds the queue (FOR SHARE) to commit, and the list after
		// it sees their placements.
		if err := tx.DeleteQueue(q.Name); err != nil {
			return err
		}
		for {
			pending, err := tx.ListPendingPlacements(store.PendingQuery{Queue: q.Name}, 100)
			if err != nil {
				return err
			}
			if len(pending) == 0 {
				break
			}
			for _, p := range pending {
				if err := s.endPlacement(tx, q, p, game.PlacementFailed); err != nil {
					return err
				}
			}
		}
		return tx.DeleteAllTags(q.ARN)
	})
	if err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

func queueOut(q *game.Queue) *wire.GameSessionQueue {
	out := &wire.GameSessionQueue{
		Name: wire.String(q.Name), GameSessionQueueArn: wire.String(q.ARN), TimeoutInSeconds: wire.Int32(q.TimeoutSeconds),
		Destinations: []wire.GameSessionQueueDestination{}, PlayerLatencyPolicies: []wire.PlayerLatencyPolicy{},
		CustomEventData: wire.String(q.CustomEventData), NotificationTarget: wire.String(q.NotificationTarget),
	}
	for _, d := range q.Destinations {
		out.Destinations = append(out.Destinations, wire.GameSessionQueueDestination{DestinationArn: wire.String(d)})
	}
	for _, p := range q.LatencyPolicies {
		lp := wire.PlayerLatencyPolicy{MaximumIndividualPlayerLatencyMilliseconds: wire.Int32(p.MaxLatencyMs)}
		if p.DurationSeconds > 0 {
			lp.PolicyDurationSeconds = wire.Int32(p.DurationSeconds)
		}
		out.PlayerLatencyPolicies = append(out.PlayerLatencyPolicies, lp)
	}
	if len(q.AllowedLocations) > 0 {
		out.FilterConfiguration = &wire.FilterConfiguration{AllowedLocations: q.AllowedLocations}
	}
	if len(q.PriorityOrder) > 0 || len(q.LocationOrder) > 0 {
		out.PriorityConfiguration = &wire.PriorityConfiguration{PriorityOrder: q.PriorityOrder, LocationOrder: q.LocationOrder}
	}
	return out
}
