package flexmatch

import (
	"encoding/json"
	"strconv"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/matchmaking/ruleset"
)

// matchmakerData is GameSession.MatchmakerData in the shape the server
// SDKs parse.
type matchmakerData struct {
	MatchID            string    `json:"matchId"`
	ConfigurationARN   string    `json:"matchmakingConfigurationArn"`
	Teams              []mmdTeam `json:"teams"`
	AutoBackfillMode   *string   `json:"autoBackfillMode"`
	AutoBackfillTicket *string   `json:"autoBackfillTicketId"`
}

type mmdTeam struct {
	Name    string      `json:"name"`
	Players []mmdPlayer `json:"players"`
}

type mmdPlayer struct {
	PlayerID   string                  `json:"playerId"`
	Attributes map[string]mmdAttribute `json:"attributes"`
}

type mmdAttribute struct {
	Type  string          `json:"attributeType"`
	Value json.RawMessage `json:"valueAttribute"`
}

// buildMatchmakerData renders the data for a match of c under rs: every
// team instance, each player with its declared attributes (defaults
// filled in, undeclared ones left out).
func (s *Service) buildMatchmakerData(c *game.MatchmakingConfiguration, rs *ruleset.RuleSet, matchID, autoTicket string, players []game.TicketPlayer) (string, error) {
	mode := c.BackfillMode
	d := matchmakerData{MatchID: matchID, ConfigurationARN: s.cfg.Account.MatchmakingConfigurationARN(c.Name), Teams: []mmdTeam{},
		AutoBackfillMode: &mode}
	if autoTicket != "" {
		d.AutoBackfillTicket = &autoTicket
	}
	idx := map[string]int{}
	for _, in := range rs.Instances {
		idx[in.Name] = len(d.Teams)
		d.Teams = append(d.Teams, mmdTeam{Name: in.Name, Players: []mmdPlayer{}})
	}
	for _, p := range players {
		i, ok := idx[p.Team]
		if !ok {
			continue
		}
		given, err := storedValues(p.Attributes)
		if err != nil {
			return "", err
		}
		vals, _ := rs.PlayerAttributes(given)
		mp := mmdPlayer{PlayerID: p.ID, Attributes: map[string]mmdAttribute{}}
		for name, v := range vals {
			mp.Attributes[name] = mmdAttributeOf(v)
		}
		d.Teams[i].Players = append(d.Teams[i].Players, mp)
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// mmdAttributeOf renders one attribute; numbers always carry a decimal
// point, as the SDKs' examples show (10.0).
func mmdAttributeOf(v ruleset.Value) mmdAttribute {
	switch v.Type {
	case ruleset.TypeNumber:
		return mmdAttribute{"DOUBLE", json.RawMessage(doubleJSON(v.N))}
	case ruleset.TypeStringList:
		b, _ := json.Marshal(v.SL)
		return mmdAttribute{"STRING_LIST", b}
	case ruleset.TypeStringNumberMap:
		b, _ := json.Marshal(v.SDM)
		return mmdAttribute{"STRING_DOUBLE_MAP", b}
	}
	b, _ := json.Marshal(v.S)
	return mmdAttribute{"STRING", b}
}

func doubleJSON(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'E' {
			return s
		}
	}
	return s + ".0"
}

// readMatchmakerData parses a session's MatchmakerData; ok is false when
// the session has none (it was not made by FlexMatch).
func readMatchmakerData(raw string) (d matchmakerData, ok bool) {
	if raw == "" || json.Unmarshal([]byte(raw), &d) != nil || d.MatchID == "" {
		return d, false
	}
	return d, true
}

// attributesFromData reads MatchmakerData attributes back into a
// ticket's attributes.
func attributesFromData(in map[string]mmdAttribute) map[string]game.AttributeValue {
	out := map[string]game.AttributeValue{}
	for name, a := range in {
		var v game.AttributeValue
		switch a.Type {
		case "DOUBLE":
			v.N = new(float64)
			_ = json.Unmarshal(a.Value, v.N)
		case "STRING_LIST":
			_ = json.Unmarshal(a.Value, &v.SL)
		case "STRING_DOUBLE_MAP":
			_ = json.Unmarshal(a.Value, &v.SDM)
		default:
			v.S = new(string)
			_ = json.Unmarshal(a.Value, v.S)
		}
		out[name] = v
	}
	return out
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
