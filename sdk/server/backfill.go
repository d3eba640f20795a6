package server

import (
	"regexp"

	"github.com/anylift/anylift/internal/sdkwire"
)

// StartMatchBackfillRequest asks FlexMatch to fill the open slots of this
// process's game session. Players are all players now in the session,
// each with its Team and the attributes from the session's MatchmakerData.
type StartMatchBackfillRequest struct {
	GameSessionArn              string
	MatchmakingConfigurationArn string
	TicketID                    string // optional; the service makes one when empty
	Players                     []Player
}

// Player is a player of a backfill request.
type Player struct {
	PlayerID         string
	Team             string
	PlayerAttributes map[string]AttributeValue
	LatencyInMS      map[string]int
}

// AttributeValue is a player attribute; AttrType names the member that
// carries the value: STRING (S), DOUBLE (N), STRING_LIST (SL) or
// STRING_DOUBLE_MAP (SDM).
type AttributeValue struct {
	AttrType string
	S        string
	N        float64
	SL       []string
	SDM      map[string]float64
}

// StartMatchBackfillResult names the backfill ticket.
type StartMatchBackfillResult struct {
	TicketID string
}

// StopMatchBackfillRequest cancels a backfill ticket.
type StopMatchBackfillRequest struct {
	GameSessionArn              string
	MatchmakingConfigurationArn string
	TicketID                    string
}

var (
	gameLiftARN  = regexp.MustCompile(`^arn:(aws|aws-cn):gamelift:([a-z]{2}-[a-z]+-\d{1}):(\d{12})?:([a-z]+)\/(.+)$`)
	sessionARN   = regexp.MustCompile(`^[a-zA-Z0-9:/-]+$`)
	backfillTick = regexp.MustCompile(`^[a-zA-Z0-9-\.]*$`)
)

// StartMatchBackfill sends a backfill request; the outcome arrives later
// through OnUpdateGameSession (MATCHMAKING_DATA_UPDATED with the new
// MatchmakerData, or BACKFILL_FAILED / _TIMED_OUT / _CANCELLED).
func (p *Process) StartMatchBackfill(req StartMatchBackfillRequest) (StartMatchBackfillResult, error) {
	switch {
	case !sessionARN.MatchString(req.GameSessionArn) || len(req.GameSessionArn) > 256:
		return StartMatchBackfillResult{}, errorf(Validation, "GameSessionArn is required and must match %s", sessionARN)
	case !gameLiftARN.MatchString(req.MatchmakingConfigurationArn) || len(req.MatchmakingConfigurationArn) > 256:
		return StartMatchBackfillResult{}, errorf(Validation, "MatchmakingConfigurationArn must be a GameLift ARN")
	case !backfillTick.MatchString(req.TicketID) || len(req.TicketID) > 128:
		return StartMatchBackfillResult{}, errorf(Validation, "TicketID must match %s", backfillTick)
	case len(req.Players) == 0:
		return StartMatchBackfillResult{}, errorf(Validation, "Players must not be empty")
	}
	msg := &sdkwire.StartMatchBackfill{GameSessionArn: req.GameSessionArn, MatchmakingConfigurationArn: req.MatchmakingConfigurationArn,
		TicketId: req.TicketID}
	for _, pl := range req.Players {
		wp := sdkwire.Player{PlayerId: pl.PlayerID, Team: pl.Team, LatencyInMs: pl.LatencyInMS}
		for k, a := range pl.PlayerAttributes {
			if wp.PlayerAttributes == nil {
				wp.PlayerAttributes = map[string]sdkwire.AttributeValue{}
			}
			wp.PlayerAttributes[k] = sdkwire.AttributeValue{AttrType: a.AttrType, S: a.S, N: a.N, SL: a.SL, SDM: a.SDM}
		}
		msg.Players = append(msg.Players, wp)
	}
	f, err := p.call(msg, p.opts.RequestTimeout)
	if err != nil {
		return StartMatchBackfillResult{}, err
	}
	var res sdkwire.StartMatchBackfillResult
	if err := f.Decode(&res); err != nil {
		return StartMatchBackfillResult{}, errorf(InternalService, "malformed answer: %v", err)
	}
	return StartMatchBackfillResult{TicketID: res.TicketId}, nil
}

// StopMatchBackfill cancels a backfill ticket of this process's session.
func (p *Process) StopMatchBackfill(req StopMatchBackfillRequest) error {
	switch {
	case !gameLiftARN.MatchString(req.GameSessionArn) || len(req.GameSessionArn) > 256:
		return errorf(Validation, "GameSessionArn must be a GameLift ARN")
	case !gameLiftARN.MatchString(req.MatchmakingConfigurationArn) || len(req.MatchmakingConfigurationArn) > 256:
		return errorf(Validation, "MatchmakingConfigurationArn must be a GameLift ARN")
	case req.TicketID == "" || len(req.TicketID) > 128:
		return errorf(Validation, "TicketID is required (at most 128 characters)")
	}
	_, err := p.call(&sdkwire.StopMatchBackfill{GameSessionArn: req.GameSessionArn,
		MatchmakingConfigurationArn: req.MatchmakingConfigurationArn, TicketId: req.TicketID}, p.opts.RequestTimeout)
	return err
}
