package flexmatch

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Matchmaking event types.
const (
	evSearching       = "MatchmakingSearching"
	evPotentialMatch  = "PotentialMatchCreated"
	evAcceptMatch     = "AcceptMatch"
	evAcceptCompleted = "AcceptMatchCompleted"
	evSucceeded       = "MatchmakingSucceeded"
	evTimedOut        = "MatchmakingTimedOut"
	evCancelled       = "MatchmakingCancelled"
	evFailed          = "MatchmakingFailed"
)

// matchDetail is the detail of every matchmaking event; members a type
// does not carry are left empty and omitted.
type matchDetail struct {
	Type                string          `json:"type"`
	Tickets             []ticketDetail  `json:"tickets"`
	EstimatedWaitMillis any             `json:"estimatedWaitMillis,omitempty"`
	AcceptanceTimeout   *int            `json:"acceptanceTimeout,omitempty"`
	AcceptanceRequired  *bool           `json:"acceptanceRequired,omitempty"`
	Acceptance          string          `json:"acceptance,omitempty"`
	Reason              string          `json:"reason,omitempty"`
	Message             string          `json:"message,omitempty"`
	RuleEvaluation      []ruleMetric    `json:"ruleEvaluationMetrics,omitempty"`
	GameSessionInfo     gameSessionInfo `json:"gameSessionInfo"`
	MatchID             string          `json:"matchId,omitempty"`
	CustomEventData     string          `json:"customEventData,omitempty"`
}

type ticketDetail struct {
	TicketID  string         `json:"ticketId"`
	StartTime string         `json:"startTime"`
	Players   []playerDetail `json:"players"`
}

type playerDetail struct {
	PlayerID        string `json:"playerId"`
	Team            string `json:"team,omitempty"`
	PlayerSessionID string `json:"playerSessionId,omitempty"`
	Accepted        *bool  `json:"accepted,omitempty"`
}

type gameSessionInfo struct {
	GameSessionARN      string         `json:"gameSessionArn,omitempty"`
	IPAddress           string         `json:"ipAddress,omitempty"`
	Port                int            `json:"port,omitempty"`
	PlayerGatewayStatus string         `json:"playerGatewayStatus,omitempty"`
	Players             []playerDetail `json:"players"`
}

type ruleMetric struct {
	RuleName    string `json:"ruleName"`
	PassedCount int    `json:"passedCount"`
	FailedCount int    `json:"failedCount"`
}

// newMatchDetail describes tickets (in match m, nil when none) for an
// event of type typ; answers carries AcceptMatch answers.
func newMatchDetail(typ string, c *game.MatchmakingConfiguration, m *game.Match, tickets []*game.MatchTicket) *matchDetail {
	d := &matchDetail{Type: typ, Tickets: []ticketDetail{}, GameSessionInfo: gameSessionInfo{Players: []playerDetail{}},
		CustomEventData: c.CustomEventData}
	if m != nil {
		d.MatchID = m.ID
	}
	for _, t := range tickets {
		td := ticketDetail{TicketID: t.ID, StartTime: game.EventTime(t.StartTime), Players: []playerDetail{}}
		for _, p := range t.Players {
			pd := playerDetail{PlayerID: p.ID, Team: p.Team, PlayerSessionID: p.PlayerSessionID}
			if m != nil && typ == evAcceptMatch {
				if a, ok := m.Answers[p.ID]; ok {
					pd.Accepted = &a
				}
			}
			td.Players = append(td.Players, pd)
			d.GameSessionInfo.Players = append(d.GameSessionInfo.Players, pd)
		}
		d.Tickets = append(d.Tickets, td)
	}
	return d
}

// publishMatch publishes a matchmaking event of c inside tx.
func (s *Service) publishMatch(tx store.Tx, c *game.MatchmakingConfiguration, d *matchDetail) error {
	return s.ctl.PublishMatchmakingEvent(tx, d.Type, s.cfg.Account.MatchmakingConfigurationARN(c.Name), c.NotificationTarget, d)
}

// publishEach publishes one event per ticket, as GameLift does for
// searching, time-outs, cancellations and failures.
func (s *Service) publishEach(tx store.Tx, c *game.MatchmakingConfiguration, typ string, m *game.Match, tickets []*game.MatchTicket) error {
	if len(tickets) == 0 {
		return nil // nor the wait estimate's query
	}
	var wait any = "NOT_AVAILABLE"
	if typ == evSearching {
		if secs, ok, err := estimatedWait(tx, c.Name); err != nil {
			return err
		} else if ok {
			wait = secs // seconds despite the name, as GameLift sends it
		}
	}
	for _, t := range tickets {
		d := newMatchDetail(typ, c, m, []*game.MatchTicket{t})
		switch typ {
		case evSearching:
			d.EstimatedWaitMillis = wait
		case evTimedOut:
			d.Reason, d.Message = "TimedOut", "Removed from matchmaking due to timing out."
		case evCancelled:
			d.Reason, d.Message = "Cancelled", cancelMessage(t)
		case evFailed:
			d.Reason, d.Message = "UNEXPECTED_ERROR", "An unexpected error was encountered during match placing."
		}
		if err := s.publishMatch(tx, c, d); err != nil {
			return err
		}
	}
	return nil
}

func cancelMessage(t *game.MatchTicket) string {
	if t.StatusMessage != "" {
		return t.StatusMessage
	}
	return "Cancelled by request."
}
