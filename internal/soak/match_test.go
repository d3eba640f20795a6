package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

// load is everything that drives the server: the process pool, the API
// clients and what the readers may ask about.
type load struct {
	p         *pool
	gl        *gamelift.Client // keep-alive
	keepAlive tracingTransport // gl's
	churn     *gamelift.Client // a new connection for every call
	st        *stats
	fleet     string
	queue     string
	locs      []string
	matchSeq  atomic.Int64
	matches   atomic.Int64 // completed, whatever their end
	recent    recent
}

// recent keeps the latest game session and placement ids for the readers.
type recent struct {
	mu         sync.Mutex
	sessions   [64]string
	placements [64]string
	ns, np     int
}

func (r *recent) addSession(id string) {
	r.mu.Lock()
	r.sessions[r.ns%len(r.sessions)] = id
	r.ns++
	r.mu.Unlock()
}

func (r *recent) addPlacement(id string) {
	r.mu.Lock()
	r.placements[r.np%len(r.placements)] = id
	r.np++
	r.mu.Unlock()
}

// pick returns a random recent game session id and placement id ("" when
// none yet).
func (r *recent) pick(rnd *rand.Rand) (session, placement string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ns > 0 {
		session = r.sessions[rnd.IntN(min(r.ns, len(r.sessions)))]
	}
	if r.np > 0 {
		placement = r.placements[rnd.IntN(min(r.np, len(r.placements)))]
	}
	return session, placement
}

// drive runs matches back to back until ctx ends.
func (l *load) drive(ctx context.Context, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 2))
	for ctx.Err() == nil {
		l.match(ctx, r)
	}
}

// match is one game from start to end: a game session created directly
// or placed through the queue, activated by whichever process the service
// chose; players join (and one too many is refused), the game session is
// read and updated, some players leave, and the process ends the game its
// own way (its style).
func (l *load) match(ctx context.Context, r *rand.Rand) {
	n := l.matchSeq.Add(1)
	name := fmt.Sprintf("match-%d", n)
	maxPlayers := int32(3 + r.IntN(6))
	loc := l.locs[r.IntN(len(l.locs))]
	viaQueue := r.IntN(10) < 3
	var placed []string // player session ids of the placement
	var act activation
	if viaQueue {
		_, err := l.gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{
			PlacementId: aws.String(name), GameSessionQueueName: aws.String(l.queue), GameSessionName: aws.String(name),
			MaximumPlayerSessionCount: aws.Int32(maxPlayers),
			DesiredPlayerSessions:     []types.DesiredPlayerSession{{PlayerId: aws.String(name + "-p0")}, {PlayerId: aws.String(name + "-p1")}},
			PlayerLatencies: []types.PlayerLatency{{PlayerId: aws.String(name + "-p0"), RegionIdentifier: aws.String(loc),
				LatencyInMilliseconds: aws.Float32(20)}},
		})
		l.st.record("StartGameSessionPlacement", err)
		if err != nil {
			return
		}
		l.recent.addPlacement(name)
		if act = l.p.await(ctx, name); act.err != nil {
			l.st.record("placement activated", act.err)
			return
		}
		out, err := l.gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(name)})
		if err == nil && out.GameSessionPlacement.Status != types.GameSessionPlacementStateFulfilled {
			err = kindError("placement " + string(out.GameSessionPlacement.Status) + " after activation")
		}
		l.st.record("DescribeGameSessionPlacement", err)
		if err == nil {
			for _, ps := range out.GameSessionPlacement.PlacedPlayerSessions {
				placed = append(placed, aws.ToString(ps.PlayerSessionId))
			}
		}
	} else {
		_, err := l.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(l.fleet), Location: aws.String(loc),
			Name: aws.String(name), MaximumPlayerSessionCount: aws.Int32(maxPlayers),
			GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String([]string{"ranked", "casual"}[r.IntN(2)])},
				{Key: aws.String("map"), Value: aws.String(fmt.Sprintf("map-%d", r.IntN(8)))}}})
		// With every process busy the fleet has no room: a normal answer.
		l.st.record("CreateGameSession", err, "FleetCapacityExceededException")
		if err != nil {
			return
		}
		if act = l.p.await(ctx, name); act.err != nil {
			l.st.record("game session activated", act.err)
			return
		}
	}
	l.play(ctx, r, act, maxPlayers, placed)
	l.matches.Add(1)
}

// play fills the game session, plays it and ends it.
func (l *load) play(ctx context.Context, r *rand.Rand, act activation, maxPlayers int32, placed []string) {
	h, id := act.host, act.id
	var ids []string
	ids = append(ids, placed...)
	if free := int(maxPlayers) - len(placed); free > 0 {
		players := make([]string, free)
		for i := range players {
			players[i] = fmt.Sprintf("%s-q%d", id[len(id)-8:], i)
		}
		out, err := l.gl.CreatePlayerSessions(ctx, &gamelift.CreatePlayerSessionsInput{GameSessionId: aws.String(id), PlayerIds: players})
		l.st.record("CreatePlayerSessions", err)
		if err == nil {
			for _, ps := range out.PlayerSessions {
				ids = append(ids, aws.ToString(ps.PlayerSessionId))
			}
		}
	}
	_, err := l.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("one-too-many")})
	l.st.mustFail("CreatePlayerSession (full)", err, "GameSessionFullException")
	l.recent.addSession(id) // the readers' late players find it full from now on

	// Players connect and the game accepts them; now and then one never
	// shows up and the reservation times out.
	accepted := ids
	if len(ids) > 1 && r.IntN(100) < 15 {
		accepted = ids[:len(ids)-1]
	}
	for _, ps := range accepted {
		l.st.record("sdk AcceptPlayerSession", h.proc.AcceptPlayerSession(ps))
	}
	l.st.mustFail("sdk AcceptPlayerSession (unknown)", h.proc.AcceptPlayerSession("psess-00000000-0000-0000-0000-000000000000"),
		"sdk not found", "sdk bad request")

	_, err = l.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	l.st.record("DescribeGameSessions (id)", err)
	_, err = l.gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id)})
	l.st.record("DescribePlayerSessions", err)
	upd := &gamelift.UpdateGameSessionInput{GameSessionId: aws.String(id)}
	switch r.IntN(3) {
	case 0:
		upd.Name = aws.String(fmt.Sprintf("renamed-%d", r.IntN(1000)))
	case 1:
		upd.PlayerSessionCreationPolicy = types.PlayerSessionCreationPolicyDenyAll
	default:
		upd.GameProperties = []types.GameProperty{{Key: aws.String("phase"), Value: aws.String("late")}}
	}
	_, err = l.gl.UpdateGameSession(ctx, upd)
	l.st.record("UpdateGameSession", err)

	// The match runs, with health reports, for a while.
	select {
	case <-ctx.Done():
	case <-time.After(500*time.Millisecond + rand.N(2500*time.Millisecond)):
	}

	// Half the players leave before the end.
	for i, ps := range accepted {
		if i%2 == 0 || h.style == notified {
			l.st.record("sdk RemovePlayerSession", h.proc.RemovePlayerSession(ps))
		}
	}
	l.finish(ctx, h, id)
}

// finish ends the match as h's style does.
func (l *load) finish(ctx context.Context, h *host, id string) {
	switch h.style {
	case exitAfterMatch:
		h.end()
	case hostAgain:
		l.p.wg.Add(1)
		go func() {
			defer l.p.wg.Done()
			l.p.start(ctx, hostAgain)
		}()
		h.end()
	case notified:
		// The last player left: passive destroy ends the process.
		waitEnded(ctx, h, "notified process ended", l.st)
	case terminated:
		_, err := l.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id),
			TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
		l.st.record("TerminateGameSession", err)
		if err == nil {
			waitEnded(ctx, h, "terminated process ended", l.st)
		}
	case crashed:
		h.proc.Destroy()
		h.finish()
	case unhealthy:
		h.healthy.Store(false) // the service ends it after --unhealthy-timeout
	}
}

// waitEnded waits for h to be destroyed.
func waitEnded(ctx context.Context, h *host, what string, st *stats) {
	select {
	case <-h.ended:
		st.record(what, nil)
	case <-time.After(20 * time.Second):
		st.record(what, kindError("not within 20 s"))
	case <-ctx.Done():
	}
}
