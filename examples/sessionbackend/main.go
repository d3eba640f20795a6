// Command sessionbackend is the small HTTP service a game client calls to
// get a seat, written with the AWS SDK for Go v2 GameLift client: the
// backend of the usual Unreal (and Unity) session flow. The game client
// never holds AWS credentials; it POSTs to this service, which finds a game
// session with a free seat or creates one, waits until it is ACTIVE,
// reserves a player session, and answers with what the client connects
// with: IpAddress, DnsName, Port and PlayerSessionId.
//
// The same program runs against Amazon GameLift and against Anylift: only
// the endpoint differs. It reads AWS_ENDPOINT_URL_GAMELIFT (or
// AWS_ENDPOINT_URL) and sets it as the client's BaseEndpoint; without
// either it calls GameLift in the region. Credentials come from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (anylift dev accepts any
// pair), the region from AWS_REGION or AWS_DEFAULT_REGION.
//
//	POST /session  {"PlayerId":"p1"}
//	200            {"GameSessionId":"…","PlayerSessionId":"psess-…","IpAddress":"127.0.0.1","DnsName":"","Port":7777}
//
// Errors are {"Error":"…"} with 400 (bad request), 503 (no server process
// free within -wait) or 502 (the service refused).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address the game clients call")
	fleet := flag.String("fleet-id", "", "fleet (or alias id) to place game sessions on (required)")
	location := flag.String("location", "", "location of new game sessions (empty: the service decides; Anylift places a session on a one-location fleet there)")
	maxPlayers := flag.Int("max-players", 4, "MaximumPlayerSessionCount of new game sessions")
	wait := flag.Duration("wait", 30*time.Second, "how long a request may wait for a free server process and an ACTIVE game session")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *fleet == "" {
		log.Error("-fleet-id is required")
		os.Exit(2)
	}
	b := &backend{gl: newClient(os.Getenv), fleet: *fleet, location: *location,
		maxPlayers: int32(*maxPlayers), wait: *wait, poll: 500 * time.Millisecond, log: log}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	// The line tests and scripts read the address from.
	fmt.Printf("session backend on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
}

// newClient is the GameLift client of the AWS SDK for Go v2, pointed at
// AWS_ENDPOINT_URL_GAMELIFT (or AWS_ENDPOINT_URL) when one is set.
func newClient(getenv func(string) string) *gamelift.Client {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = "us-west-2"
	}
	opts := gamelift.Options{
		Region: region,
		Credentials: credentials.NewStaticCredentialsProvider(
			getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")),
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_GAMELIFT", "AWS_ENDPOINT_URL"} {
		if v := getenv(name); v != "" {
			opts.BaseEndpoint = aws.String(v)
			break
		}
	}
	return gamelift.New(opts)
}

type backend struct {
	gl         *gamelift.Client
	fleet      string
	location   string
	maxPlayers int32
	wait, poll time.Duration
	log        *slog.Logger
}

// seat is the answer: what the game client connects with.
type seat struct {
	GameSessionID   string `json:"GameSessionId"`
	PlayerSessionID string `json:"PlayerSessionId"`
	IPAddress       string `json:"IpAddress"`
	DNSName         string `json:"DnsName"`
	Port            int32  `json:"Port"`
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/session" || r.Method != http.MethodPost {
		answer(w, http.StatusNotFound, map[string]string{"Error": "POST /session"})
		return
	}
	var req struct{ PlayerId string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.PlayerId == "" {
		answer(w, http.StatusBadRequest, map[string]string{"Error": `the body must be {"PlayerId":"…"}`})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), b.wait)
	defer cancel()
	s, err := b.seat(ctx, req.PlayerId)
	switch {
	case err == nil:
		answer(w, http.StatusOK, s)
	case errors.Is(err, errNoCapacity):
		answer(w, http.StatusServiceUnavailable, map[string]string{"Error": err.Error()})
	default:
		b.log.Warn("no seat", "player", req.PlayerId, "err", err)
		answer(w, http.StatusBadGateway, map[string]string{"Error": err.Error()})
	}
}

var errNoCapacity = errors.New("no game server process is free; try again shortly")

// errEnded says a game session ended before it could take the player.
var errEnded = errors.New("it ended before taking players")

// seat finds a game session with a free seat or creates one, waits until
// it is ACTIVE, and reserves a player session in it. A session that fills
// up or ends in between (its server process may have been ending as the
// session was placed on it) is skipped and the search starts again.
func (b *backend) seat(ctx context.Context, playerID string) (seat, error) {
	for {
		gs, err := b.findOrCreate(ctx)
		if err != nil {
			return seat{}, err
		}
		gs, err = b.waitActive(ctx, gs)
		if errors.Is(err, errEnded) {
			continue
		}
		if err != nil {
			return seat{}, err
		}
		out, err := b.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{
			GameSessionId: gs.GameSessionId, PlayerId: aws.String(playerID),
		})
		var full *types.GameSessionFullException
		var status *types.InvalidGameSessionStatusException
		if errors.As(err, &full) || errors.As(err, &status) {
			continue
		}
		if err != nil {
			return seat{}, err
		}
		ps := out.PlayerSession
		return seat{GameSessionID: aws.ToString(ps.GameSessionId), PlayerSessionID: aws.ToString(ps.PlayerSessionId),
			IPAddress: aws.ToString(ps.IpAddress), DNSName: aws.ToString(ps.DnsName), Port: aws.ToInt32(ps.Port)}, nil
	}
}

// findOrCreate returns the oldest ACTIVE game session with a free seat, or
// a new one. While no server process is free (FleetCapacityExceeded), it
// tries again until the request's time is up.
func (b *backend) findOrCreate(ctx context.Context) (*types.GameSession, error) {
	search := &gamelift.SearchGameSessionsInput{
		FilterExpression: aws.String("hasAvailablePlayerSessions=true"),
		SortExpression:   aws.String("creationTimeMillis ASC"),
		Limit:            aws.Int32(1),
	}
	create := &gamelift.CreateGameSessionInput{MaximumPlayerSessionCount: aws.Int32(b.maxPlayers)}
	if isAlias(b.fleet) {
		search.AliasId, create.AliasId = aws.String(b.fleet), aws.String(b.fleet)
	} else {
		search.FleetId, create.FleetId = aws.String(b.fleet), aws.String(b.fleet)
	}
	if b.location != "" {
		search.Location, create.Location = aws.String(b.location), aws.String(b.location)
	}
	found, err := b.gl.SearchGameSessions(ctx, search)
	if err != nil {
		return nil, err
	}
	if len(found.GameSessions) > 0 {
		return &found.GameSessions[0], nil
	}
	for {
		out, err := b.gl.CreateGameSession(ctx, create)
		var capacity *types.FleetCapacityExceededException
		if !errors.As(err, &capacity) {
			if err != nil {
				return nil, err
			}
			return out.GameSession, nil
		}
		if !b.pause(ctx) {
			return nil, errNoCapacity
		}
	}
}

// waitActive polls DescribeGameSessions until the session is ACTIVE.
func (b *backend) waitActive(ctx context.Context, gs *types.GameSession) (*types.GameSession, error) {
	for {
		switch gs.Status {
		case types.GameSessionStatusActive:
			return gs, nil
		case types.GameSessionStatusActivating:
		default:
			return nil, fmt.Errorf("game session %s is %s: %w", aws.ToString(gs.GameSessionId), gs.Status, errEnded)
		}
		if !b.pause(ctx) {
			return nil, fmt.Errorf("game session %s did not become ACTIVE in time", aws.ToString(gs.GameSessionId))
		}
		out, err := b.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSessionId})
		if err != nil {
			return nil, err
		}
		if len(out.GameSessions) != 1 {
			return nil, fmt.Errorf("game session %s is gone", aws.ToString(gs.GameSessionId))
		}
		gs = &out.GameSessions[0]
	}
}

// pause waits one polling interval; false when the request's time is up.
func (b *backend) pause(ctx context.Context) bool {
	t := time.NewTimer(b.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func isAlias(id string) bool { return len(id) > 6 && id[:6] == "alias-" }

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
