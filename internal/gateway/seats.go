package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
	"github.com/anylift/anylift/sdk/playerwire"
)

// reserve takes a seat for player in gs (CreatePlayerSession).
func (g *Gateway) reserve(ctx context.Context, gs *wire.GameSession, player, data string) (*playerwire.Seat, error) {
	in := &wire.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId, PlayerId: wire.String(player), PlayerData: wire.String(data)}
	if err := in.Validate(); err != nil {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	}
	out, err := g.ctl.CreatePlayerSession(ctx, in)
	if err != nil {
		return nil, err
	}
	return seatOf(out.PlayerSession, wire.Deref(gs.Location)), nil
}

func seatOf(ps *wire.PlayerSession, location string) *playerwire.Seat {
	return &playerwire.Seat{
		GameSessionId: wire.Deref(ps.GameSessionId), PlayerSessionId: wire.Deref(ps.PlayerSessionId),
		IpAddress: wire.Deref(ps.IpAddress), DnsName: wire.Deref(ps.DnsName), Port: wire.Deref(ps.Port), Location: location,
	}
}

// joinable reads a game session players may use: it exists and its fleet
// is open to players (directly, through an alias or a queue). A session
// on a closed fleet is NotFound, so players cannot probe for it.
func (g *Gateway) joinable(ctx context.Context, id string) (*wire.GameSession, error) {
	if id == "" || len(id) > 1024 {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, "A game session id of 1 to 1024 characters is required")
	}
	gs, err := g.session(ctx, id)
	if err != nil {
		return nil, err
	}
	ok, err := g.fleetAllowed(ctx, wire.Deref(gs.FleetId))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fail(http.StatusNotFound, CodeNotFound, "Game session "+clip(id)+" not found")
	}
	return gs, nil
}

func (g *Gateway) serveJoin(ctx context.Context, player string, r *http.Request) (any, error) {
	req, err := decodeJoin(r.Body)
	if err != nil {
		return nil, err
	}
	if err := g.routeSession(ctx, req.GameSessionId); err != nil {
		return nil, err
	}
	gs, err := g.joinable(ctx, req.GameSessionId)
	if err != nil {
		return nil, err
	}
	defer g.lockSession(wire.Deref(gs.GameSessionId))()
	if gs, err = g.session(ctx, wire.Deref(gs.GameSessionId)); err != nil { // the count as of now, under the lock
		return nil, err
	}
	if err := g.checkHolds(ctx, gs, player); err != nil {
		return nil, err
	}
	return g.reserve(ctx, gs, player, req.PlayerData)
}

// checkHolds refuses a newcomer the seats held for players who dropped
// or left less than RejoinGrace ago.
func (g *Gateway) checkHolds(ctx context.Context, gs *wire.GameSession, player string) error {
	if g.cfg.RejoinGrace < 0 || wire.Deref(gs.Status) != game.SessionActive {
		return nil
	}
	seats, err := g.seats(ctx, wire.Deref(gs.GameSessionId))
	if err != nil {
		return err
	}
	held := 0
	for p, s := range seats {
		if p != player && s.holds(g.now(), g.cfg.RejoinGrace) {
			held++
		}
	}
	if held > 0 && int(wire.Deref(gs.CurrentPlayerSessionCount))+held >= int(wire.Deref(gs.MaximumPlayerSessionCount)) {
		return fail(http.StatusConflict, CodeGameSessionFull, "The game session is full: its free seats are held for players who may rejoin")
	}
	return nil
}

// playerSeats is what one player has had in a game session.
type playerSeats struct {
	occupied []wire.PlayerSession // RESERVED or ACTIVE
	lastEnd  time.Time            // latest TerminationTime of an ended one
}

// holds reports whether the player's seat is held for them at now.
func (s *playerSeats) holds(now time.Time, grace time.Duration) bool {
	return len(s.occupied) == 0 && !s.lastEnd.IsZero() && now.Before(s.lastEnd.Add(grace))
}

// maxSeatPages bounds how much of a game session's player history is read.
const maxSeatPages = 10

// seats reads the player sessions of a game session, by player.
func (g *Gateway) seats(ctx context.Context, gameSessionID string) (map[string]*playerSeats, error) {
	out := map[string]*playerSeats{}
	var token *string
	for range maxSeatPages {
		page, err := g.ctl.DescribePlayerSessions(ctx, &wire.DescribePlayerSessionsInput{
			GameSessionId: wire.String(gameSessionID), Limit: wire.Int32(1000), NextToken: token})
		if err != nil {
			return nil, err
		}
		for _, ps := range page.PlayerSessions {
			s := out[wire.Deref(ps.PlayerId)]
			if s == nil {
				s = &playerSeats{}
				out[wire.Deref(ps.PlayerId)] = s
			}
			switch st := wire.Deref(ps.Status); {
			case st == game.PlayerReserved || st == game.PlayerActive:
				s.occupied = append(s.occupied, ps)
			case ps.TerminationTime != nil && ps.TerminationTime.After(s.lastEnd):
				s.lastEnd = ps.TerminationTime.Time
			}
		}
		if token = page.NextToken; token == nil {
			break
		}
	}
	return out, nil
}

func (g *Gateway) serveRejoin(ctx context.Context, player string, r *http.Request) (any, error) {
	req, err := decodeJoin(r.Body)
	if err != nil {
		return nil, err
	}
	if err := g.routeSession(ctx, req.GameSessionId); err != nil {
		return nil, err
	}
	gs, err := g.joinable(ctx, req.GameSessionId)
	if err != nil {
		return nil, err
	}
	if g.cfg.RejoinGrace < 0 {
		return nil, fail(http.StatusNotImplemented, CodeUnsupported, "Rejoin is turned off on this service")
	}
	defer g.lockSession(wire.Deref(gs.GameSessionId))()
	seats, err := g.seats(ctx, wire.Deref(gs.GameSessionId))
	if err != nil {
		return nil, err
	}
	return g.rejoin(ctx, gs, player, seats[player], req.PlayerData)
}

// rejoin gives a player back a seat in a game session they had one in:
// a seat still RESERVED is answered again as it is; one still ACTIVE is
// AlreadyJoined (the server has not seen the drop yet; leave first); an
// ended one is replaced by a new reservation when it ended less than
// RejoinGrace ago (its seat was held), else RejoinWindowClosed.
func (g *Gateway) rejoin(ctx context.Context, gs *wire.GameSession, player string, s *playerSeats, data string) (*playerwire.Seat, error) {
	if s == nil {
		return nil, fail(http.StatusNotFound, CodeNotFound, "You have had no seat in this game session")
	}
	for _, ps := range s.occupied {
		if wire.Deref(ps.Status) == game.PlayerReserved {
			return seatOf(&ps, wire.Deref(gs.Location)), nil
		}
	}
	if len(s.occupied) > 0 {
		return nil, fail(http.StatusConflict, CodeAlreadyJoined, "You are still in this game session; leave it first, then rejoin")
	}
	if !s.holds(g.now(), g.cfg.RejoinGrace) {
		return nil, fail(http.StatusGone, CodeRejoinWindowClosed, "Your seat in this game session is no longer held; join or search again")
	}
	return g.reserve(ctx, gs, player, data)
}

func (g *Gateway) serveLeave(ctx context.Context, player string, r *http.Request) (any, error) {
	req, err := decodeLeave(r.Body)
	if err != nil {
		return nil, err
	}
	id := req.GameSessionId
	if id == "" || len(id) > 1024 {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, "A game session id of 1 to 1024 characters is required")
	}
	if err := g.routeSession(ctx, id); err != nil {
		return nil, err
	}
	if _, err := g.session(ctx, id); err != nil {
		return nil, err
	}
	seats, err := g.seats(ctx, id)
	if err != nil {
		return nil, err
	}
	return g.leave(ctx, id, player, req.PlayerSessionId, seats[player])
}

// leave ends the caller's player sessions in a game session (COMPLETED,
// as a server's RemovePlayerSession would), freeing their seats: the one
// named, or all the caller holds. Leaving a seat already ended answers it
// again; a player session that is not the caller's is NotFound.
func (g *Gateway) leave(ctx context.Context, gameSessionID, player, named string, s *playerSeats) (*playerwire.LeaveResult, error) {
	res := &playerwire.LeaveResult{GameSessionId: gameSessionID, PlayerSessionIds: []string{}}
	var targets []string
	if s != nil {
		for _, ps := range s.occupied {
			if named == "" || wire.Deref(ps.PlayerSessionId) == named {
				targets = append(targets, wire.Deref(ps.PlayerSessionId))
			}
		}
	}
	if named != "" && len(targets) == 0 {
		if !g.ownsEnded(ctx, gameSessionID, player, named, s) {
			return nil, fail(http.StatusNotFound, CodeNotFound, "You hold no player session "+clip(named)+" in this game session")
		}
		res.PlayerSessionIds = append(res.PlayerSessionIds, named)
		return res, nil
	}
	for _, id := range targets {
		_, err := g.ctl.RemovePlayerSession(ctx, gameSessionID, id)
		if err != nil && !game.IsKind(err, game.InvalidRequest) { // InvalidRequest: ended meanwhile
			return nil, err
		}
		res.PlayerSessionIds = append(res.PlayerSessionIds, id)
	}
	return res, nil
}

// ownsEnded reports whether the named player session is the caller's and
// already ended.
func (g *Gateway) ownsEnded(ctx context.Context, gameSessionID, player, named string, s *playerSeats) bool {
	if s == nil || s.lastEnd.IsZero() {
		return false
	}
	in := &wire.DescribePlayerSessionsInput{PlayerSessionId: wire.String(named)}
	if in.Validate() != nil {
		return false
	}
	out, err := g.ctl.DescribePlayerSessions(ctx, in)
	if err != nil || len(out.PlayerSessions) != 1 {
		return false
	}
	ps := out.PlayerSessions[0]
	return wire.Deref(ps.GameSessionId) == gameSessionID && wire.Deref(ps.PlayerId) == player
}
