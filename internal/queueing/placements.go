package queueing

import (
	"context"
	"math"
	"slices"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// StartGameSessionPlacement queues a request for a new game session on a
// queue (name or ARN) and answers it PENDING; the placer places it as soon
// as a destination has a free process, and it is FULFILLED once that
// session is ACTIVE. A PlacementId already used answers that placement as
// it is now, whatever the new parameters.
// Errors: NotFound (queue), InvalidRequest (PlayerLatencies together
// with PriorityConfigurationOverride, an override on a queue whose
// PriorityOrder has no LOCATION, impossible latencies, more desired
// players than seats).
func (s *Service) StartGameSessionPlacement(ctx context.Context, in *wire.StartGameSessionPlacementInput) (*wire.StartGameSessionPlacementOutput, error) {
	var (
		p     *game.Placement
		dests []string
	)
	created := false
	err := s.update(ctx, func(tx store.Tx) error {
		p, created = nil, false
		np, q, err := s.placementFor(tx, in)
		if err == nil {
			dests = q.Destinations
			err = tx.InsertPlacement(np)
		}
		if err != nil {
			// A placement started with this id before is answered as it
			// is, whatever this call asks.
			if old, gerr := tx.GetPlacement(*in.PlacementId); gerr == nil {
				p = old
				return nil
			}
			return err
		}
		p, created = np, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if created {
		s.wakePlacerFor(dests)
	}
	return &wire.StartGameSessionPlacementOutput{GameSessionPlacement: placementOut(p)}, nil
}

// placementFor builds the PENDING placement in asks for on its queue,
// which it returns too.
func (s *Service) placementFor(tx store.Tx, in *wire.StartGameSessionPlacementInput) (*game.Placement, *game.Queue, error) {
	p, err := s.newPlacement(in)
	if err != nil {
		return nil, nil, err
	}
	q, err := tx.GetQueue(game.ResourceID(*in.GameSessionQueueName, "gamesessionqueue"))
	if err != nil {
		return nil, nil, err
	}
	if p.Override != nil && !slices.Contains(q.PriorityOrder, game.PriorityLocation) {
		return nil, nil, game.Errorf(game.InvalidRequest,
			"PriorityConfigurationOverride needs a queue that prioritizes LOCATION; queue %s's PriorityOrder does not include LOCATION", q.Name)
	}
	p.QueueName, p.QueueARN = q.Name, q.ARN
	p.Deadline = p.StartTime.Add(queueTimeout(q))
	return p, q, nil
}

// wakePlacerFor wakes the placer that places a new placement on a queue
// whose destinations are dests. When every destination names a fleet
// (no alias) that another node owns, this node's placer could only find
// that out, reading those fleets from the store, and wake their owners:
// it wakes the owners' placers at once instead (the owner of the best
// ranked candidate places it, and wakes another owner whose fleet is the
// best with room), and leaves its own asleep. Otherwise its own placer
// runs, as for any placement. A fleet this node gained meanwhile is
// placed here too.
func (s *Service) wakePlacerFor(dests []string) {
	fleets, others := s.othersOnly(dests)
	if !others {
		s.wakePlacer()
		return
	}
	for _, id := range fleets {
		s.ctl.WakeOwner(id)
	}
	if _, others := s.othersOnly(dests); !others {
		s.wakePlacer()
	}
}

// othersOnly reports whether every destination of dests names a fleet
// (no alias) that another node owns, and returns those fleets once each.
func (s *Service) othersOnly(dests []string) ([]string, bool) {
	var fleets []string
	for _, d := range dests {
		if destinationKind(d) != "fleet" {
			return nil, false
		}
		id := game.ResourceID(d, "fleet")
		if s.ctl.Owns(id) {
			return nil, false
		}
		if !slices.Contains(fleets, id) {
			fleets = append(fleets, id)
		}
	}
	return fleets, true
}

// newPlacement builds a PENDING placement from in, checking what the
// model cannot.
func (s *Service) newPlacement(in *wire.StartGameSessionPlacementInput) (*game.Placement, error) {
	if len(in.PlayerLatencies) > 0 && in.PriorityConfigurationOverride != nil {
		return nil, game.Errorf(game.InvalidRequest, "PlayerLatencies and PriorityConfigurationOverride cannot be used together")
	}
	max := int(*in.MaximumPlayerSessionCount)
	if max > s.cfg.MaxPlayersPerSession {
		return nil, game.Errorf(game.InvalidRequest, "MaximumPlayerSessionCount %d is above the limit of %d player sessions per game session",
			max, s.cfg.MaxPlayersPerSession)
	}
	p := &game.Placement{
		ID: *in.PlacementId, Status: game.PlacementPending, Properties: wire.GameProperties(in.GameProperties), MaxPlayers: max,
		GameSessionName: wire.Deref(in.GameSessionName), GameSessionData: wire.Deref(in.GameSessionData), StartTime: s.clock(),
	}
	var err error
	if p.Latencies, err = latenciesIn(in.PlayerLatencies); err != nil {
		return nil, err
	}
	if p.DesiredPlayers, err = desiredIn(in.DesiredPlayerSessions, max); err != nil {
		return nil, err
	}
	if o := in.PriorityConfigurationOverride; o != nil {
		if dup, ok := duplicate(o.LocationOrder); ok {
			return nil, game.Errorf(game.InvalidRequest, "PriorityConfigurationOverride.LocationOrder lists %s more than once", dup)
		}
		fb := wire.Deref(o.PlacementFallbackStrategy)
		if fb == "" {
			fb = game.FallbackDefaultAfterSinglePass
		}
		p.Override = &game.PriorityOverride{LocationOrder: slices.Clone(o.LocationOrder), Fallback: fb}
	}
	return p, nil
}

// latenciesIn checks reported latencies: each names a player and a
// location, once, with a finite, non-negative latency.
func latenciesIn(in []wire.PlayerLatency) ([]game.PlayerLatency, error) {
	var out []game.PlayerLatency
	seen := map[[2]string]bool{}
	for i, l := range in {
		player, region := wire.Deref(l.PlayerId), wire.Deref(l.RegionIdentifier)
		if player == "" || region == "" || l.LatencyInMilliseconds == nil {
			return nil, game.Errorf(game.InvalidRequest, "PlayerLatencies[%d] needs PlayerId, RegionIdentifier and LatencyInMilliseconds", i)
		}
		ms := float64(*l.LatencyInMilliseconds)
		if math.IsNaN(ms) || math.IsInf(ms, 0) || ms < 0 {
			return nil, game.Errorf(game.InvalidRequest, "PlayerLatencies[%d].LatencyInMilliseconds must be a non-negative number of milliseconds", i)
		}
		key := [2]string{player, region}
		if seen[key] {
			return nil, game.Errorf(game.InvalidRequest, "PlayerLatencies lists player %s in %s more than once", player, region)
		}
		seen[key] = true
		out = append(out, game.PlayerLatency{PlayerID: player, Location: region, LatencyMs: ms})
	}
	return out, nil
}

// desiredIn checks the players to seat: each named once, no more than the
// session's seats.
func desiredIn(in []wire.DesiredPlayerSession, seats int) ([]game.DesiredPlayer, error) {
	if len(in) > seats {
		return nil, game.Errorf(game.InvalidRequest, "DesiredPlayerSessions lists %d players but MaximumPlayerSessionCount is %d", len(in), seats)
	}
	var out []game.DesiredPlayer
	seen := map[string]bool{}
	for i, d := range in {
		id := wire.Deref(d.PlayerId)
		if id == "" {
			return nil, game.Errorf(game.InvalidRequest, "DesiredPlayerSessions[%d].PlayerId is required", i)
		}
		if seen[id] {
			return nil, game.Errorf(game.InvalidRequest, "DesiredPlayerSessions lists player %s more than once", id)
		}
		seen[id] = true
		out = append(out, game.DesiredPlayer{PlayerID: id, PlayerData: wire.Deref(d.PlayerData)})
	}
	return out, nil
}

// DescribeGameSessionPlacement returns a placement; NotFound when absent.
func (s *Service) DescribeGameSessionPlacement(ctx context.Context, in *wire.DescribeGameSessionPlacementInput) (*wire.DescribeGameSessionPlacementOutput, error) {
	var p *game.Placement
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		p, err = tx.GetPlacement(*in.PlacementId)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeGameSessionPlacementOutput{GameSessionPlacement: placementOut(p)}, nil
}

// StopGameSessionPlacement cancels a PENDING placement for which no game
// session has been created yet; anything else is InvalidRequest.
// It answers the placement CANCELLED.
func (s *Service) StopGameSessionPlacement(ctx context.Context, in *wire.StopGameSessionPlacementInput) (*wire.StopGameSessionPlacementOutput, error) {
	var p *game.Placement
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		if p, err = tx.GetPlacement(*in.PlacementId); err != nil {
			return err
		}
		if p.Status != game.PlacementPending {
			return game.Errorf(game.InvalidRequest, "Game session placement %s is %s; only a PENDING placement can be stopped", p.ID, p.Status)
		}
		if p.GameSessionID != "" {
			return game.Errorf(game.InvalidRequest,
				"Game session placement %s has already created game session %s; end it with TerminateGameSession", p.ID, p.GameSessionID)
		}
		q, err := s.placementQueue(tx, p)
		if err != nil {
			return err
		}
		return s.endPlacement(tx, q, p, game.PlacementCancelled)
	})
	if err != nil {
		return nil, err
	}
	return &wire.StopGameSessionPlacementOutput{GameSessionPlacement: placementOut(p)}, nil
}

// placementQueue is the placement's queue; a queue deleted since stands
// as a record with its name and ARN only.
func (s *Service) placementQueue(tx store.Tx, p *game.Placement) (*game.Queue, error) {
	q, err := tx.GetQueue(p.QueueName)
	if game.IsKind(err, game.NotFound) {
		return &game.Queue{Name: p.QueueName, ARN: p.QueueARN}, nil
	}
	return q, err
}

func placementOut(p *game.Placement) *wire.GameSessionPlacement {
	out := &wire.GameSessionPlacement{
		PlacementId: wire.String(p.ID), GameSessionQueueName: wire.String(p.QueueName), Status: wire.String(p.Status),
		GameProperties: []wire.GameProperty{}, MaximumPlayerSessionCount: wire.Int32(p.MaxPlayers),
		GameSessionName: wire.String(p.GameSessionName), GameSessionId: wire.String(p.GameSessionID),
		GameSessionArn: wire.String(p.GameSessionID), GameSessionRegion: wire.String(p.GameSessionRegion),
		PlayerLatencies: []wire.PlayerLatency{}, StartTime: wire.NewTime(p.StartTime),
		IpAddress: wire.String(p.IPAddress), DnsName: wire.String(p.DNSName),
		GameSessionData: wire.String(p.GameSessionData), MatchmakerData: wire.String(p.MatchmakerData),
	}
	if !p.EndTime.IsZero() {
		out.EndTime = wire.NewTime(p.EndTime)
	}
	if p.Port > 0 {
		out.Port = wire.Int32(p.Port)
	}
	for _, pr := range p.Properties {
		out.GameProperties = append(out.GameProperties, wire.GameProperty{Key: wire.String(pr.Key), Value: &pr.Value})
	}
	for _, l := range p.Latencies {
		ms := float32(l.LatencyMs)
		out.PlayerLatencies = append(out.PlayerLatencies, wire.PlayerLatency{PlayerId: wire.String(l.PlayerID), RegionIdentifier: wire.String(l.Location), LatencyInMilliseconds: &ms})
	}
	if p.Status == game.PlacementFulfilled {
		out.PlacedPlayerSessions = []wire.PlacedPlayerSession{}
		for _, pp := range p.PlacedPlayers {
			out.PlacedPlayerSessions = append(out.PlacedPlayerSessions, wire.PlacedPlayerSession{PlayerId: wire.String(pp.PlayerID), PlayerSessionId: wire.String(pp.PlayerSessionID)})
		}
	}
	if o := p.Override; o != nil {
		out.PriorityConfigurationOverride = &wire.PriorityConfigurationOverride{LocationOrder: o.LocationOrder, PlacementFallbackStrategy: wire.String(o.Fallback)}
	}
	return out
}
