package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anylift/anylift/sdk/playerwire"
)

// devPlayerHeader names the player to a gateway in dev mode.
const devPlayerHeader = "X-Anylift-Player-Id"

// gatewayTransport calls the player gateway.
type gatewayTransport struct{ cfg Config }

func (g *gatewayTransport) create(ctx context.Context, r CreateSessionRequest) (Seat, error) {
	var seat playerwire.Seat
	err := g.call(ctx, playerwire.PathCreate, playerwire.CreateSessionRequest{
		FleetId: r.FleetID, AliasId: r.AliasID, Location: r.Location, MaximumPlayerSessionCount: int32(r.MaxPlayers),
		Name: r.Name, GameProperties: properties(r.Properties), GameSessionData: r.SessionData,
		IdempotencyToken: r.IdempotencyToken, PlayerData: r.PlayerData,
	}, &seat)
	return seatFrom(seat, g.cfg.DevPlayerID), err
}

func (g *gatewayTransport) createOnQueue(ctx context.Context, r CreateSessionOnQueueRequest) (Seat, error) {
	var seat playerwire.Seat
	err := g.call(ctx, playerwire.PathCreate, playerwire.CreateSessionRequest{
		QueueName: r.QueueName, MaximumPlayerSessionCount: int32(r.MaxPlayers), Name: r.Name,
		GameProperties: properties(r.Properties), GameSessionData: r.SessionData,
		IdempotencyToken: r.PlacementID, PlayerData: r.PlayerData,
	}, &seat)
	return seatFrom(seat, g.cfg.DevPlayerID), err
}

func (g *gatewayTransport) search(ctx context.Context, r SearchSessionsRequest) (SearchSessionsResult, error) {
	var out playerwire.SearchResult
	err := g.call(ctx, playerwire.PathSearch, playerwire.SearchRequest{
		FleetId: r.FleetID, AliasId: r.AliasID, Location: r.Location, FilterExpression: r.Filter,
		SortExpression: r.Sort, Limit: int32(r.Limit), NextToken: r.NextToken,
	}, &out)
	res := SearchSessionsResult{NextToken: out.NextToken}
	for _, s := range out.GameSessions {
		info := SessionInfo{GameSessionID: s.GameSessionId, Name: s.Name, FleetID: s.FleetId, Location: s.Location,
			Status: s.Status, CurrentPlayers: int(s.CurrentPlayerSessionCount), MaxPlayers: int(s.MaximumPlayerSessionCount),
			CreationPolicy: s.PlayerSessionCreationPolicy, Properties: map[string]string{}}
		info.CreationTime, _ = time.Parse(time.RFC3339Nano, s.CreationTime)
		for _, p := range s.GameProperties {
			info.Properties[p.Key] = p.Value
		}
		res.Sessions = append(res.Sessions, info)
	}
	return res, err
}

func (g *gatewayTransport) reserve(ctx context.Context, r JoinSessionRequest) (Seat, error) {
	var seat playerwire.Seat
	err := g.call(ctx, playerwire.PathJoin, playerwire.JoinRequest{GameSessionId: r.GameSessionID, PlayerData: r.PlayerData}, &seat)
	return seatFrom(seat, g.cfg.DevPlayerID), err
}

func (g *gatewayTransport) rejoin(ctx context.Context, id string) (Seat, error) {
	var seat playerwire.Seat
	err := g.call(ctx, playerwire.PathRejoin, playerwire.JoinRequest{GameSessionId: id}, &seat)
	return seatFrom(seat, g.cfg.DevPlayerID), err
}

func (g *gatewayTransport) release(ctx context.Context, s Seat) error {
	var out playerwire.LeaveResult
	return g.call(ctx, playerwire.PathLeave, playerwire.LeaveRequest{GameSessionId: s.GameSessionID, PlayerSessionId: s.PlayerSessionID}, &out)
}

// call posts in to path and decodes a 200 answer into out, or the error
// answer into an *Error.
func (g *gatewayTransport) call(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return &Error{Code: CodeInvalidParameter, Message: "encoding the request: " + err.Error(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(g.cfg.Endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		return &Error{Code: CodeInvalidParameter, Message: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if err := g.authorize(ctx, req); err != nil {
		return err
	}
	resp, err := g.cfg.HTTPClient.Do(req)
	if err != nil {
		return &Error{Code: CodeNetwork, Message: "the player gateway could not be reached", Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &Error{Code: CodeNetwork, Message: "reading the player gateway's answer failed", Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		var pe playerwire.Error
		if json.Unmarshal(data, &pe) != nil || pe.Code == "" {
			return &Error{Code: CodeInternal, Status: resp.StatusCode, Message: "the player gateway answered " + resp.Status}
		}
		return &Error{Code: pe.Code, Message: pe.Message, GameSessionID: pe.GameSessionId, Cause: pe.Cause, Status: resp.StatusCode}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Code: CodeInternal, Status: resp.StatusCode, Message: "the player gateway's answer is not valid JSON", Err: err}
	}
	return nil
}

func (g *gatewayTransport) authorize(ctx context.Context, req *http.Request) error {
	if g.cfg.DevPlayerID != "" {
		req.Header.Set(devPlayerHeader, g.cfg.DevPlayerID)
		return nil
	}
	tok, err := g.cfg.PlayerToken(ctx)
	if err != nil {
		return &Error{Code: CodeMissingToken, Message: "getting the player token failed: " + err.Error(), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func properties(m map[string]string) []playerwire.Property {
	var out []playerwire.Property
	for k, v := range m {
		out = append(out, playerwire.Property{Key: k, Value: v})
	}
	return out
}

func seatFrom(s playerwire.Seat, player string) Seat {
	return Seat{GameSessionID: s.GameSessionId, PlayerSessionID: s.PlayerSessionId, PlayerID: player,
		IPAddress: s.IpAddress, DNSName: s.DnsName, Port: int(s.Port), Location: s.Location}
}
