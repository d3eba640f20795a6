package soak

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	gl "github.com/anylift/anylift/sdk/server"
)

const unknownID = "00000000-0000-0000-0000-000000000000"

// newClient is the AWS SDK for Go v2 client of url, without retries so
// that every failure is counted; keepAlive false opens a connection for
// every call.
func newClient(url string, keepAlive bool, secret string) (*gamelift.Client, tracingTransport) {
	tr := newTransport(keepAlive)
	return gamelift.New(gamelift.Options{Region: apitest.Region, BaseEndpoint: aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider(apitest.AccessKey, secret, ""),
		RetryMaxAttempts: 1, HTTPClient: &http.Client{Transport: tr, Timeout: 30 * time.Second}}), tr
}

// read is one reader call: a random read of the fleet's state, or a call
// that fails on purpose.
type read func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (op string, err error, want []string)

func (l *load) reads() []read {
	fleet := aws.String(l.fleet)
	return []read{
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: fleet,
				FilterExpression: aws.String("hasAvailablePlayerSessions=true"), SortExpression: aws.String("creationTimeMillis ASC"),
				Limit: aws.Int32(10)})
			return "SearchGameSessions (seats)", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: fleet,
				FilterExpression: aws.String("gameSessionProperties.mode = 'ranked' AND playerSessionCount > 1")})
			return "SearchGameSessions (property)", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: fleet, StatusFilter: aws.String("ACTIVE"),
				Limit: aws.Int32(20)})
			return "DescribeGameSessions (active)", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: fleet, Limit: aws.Int32(20)})
			return "DescribeGameSessions (fleet)", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			id, _ := l.recent.pick(r)
			if id == "" {
				return "", nil, nil
			}
			_, err := c.DescribeGameSessionDetails(ctx, &gamelift.DescribeGameSessionDetailsInput{GameSessionId: aws.String(id)})
			return "DescribeGameSessionDetails", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			id, _ := l.recent.pick(r)
			if id == "" {
				return "", nil, nil
			}
			_, err := c.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{GameSessionId: aws.String(id)})
			return "DescribePlayerSessions", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, id := l.recent.pick(r)
			if id == "" {
				return "", nil, nil
			}
			_, err := c.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
			return "DescribeGameSessionPlacement", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.ListFleets(ctx, &gamelift.ListFleetsInput{})
			return "ListFleets", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{l.fleet}})
			return "DescribeFleetAttributes", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: fleet,
				StartTime: aws.Time(time.Now().Add(-2 * time.Minute)), Limit: aws.Int32(20)})
			return "DescribeFleetEvents", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeGameSessionQueues(ctx, &gamelift.DescribeGameSessionQueuesInput{})
			return "DescribeGameSessionQueues", err, nil
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: fleet})
			return "ListCompute", err, nil
		},
		// Calls that fail on purpose.
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{
				GameSessionId: aws.String("arn:aws:gamelift:us-west-2::gamesession/" + l.fleet + "/gsess-" + unknownID)})
			return "DescribeGameSessions (unknown id)", err, []string{"NotFoundException"}
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{PlayerId: aws.String("p"),
				GameSessionId: aws.String("arn:aws:gamelift:us-west-2::gamesession/" + l.fleet + "/gsess-" + unknownID)})
			return "CreatePlayerSession (unknown session)", err, []string{"NotFoundException"}
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: fleet,
				FilterExpression: aws.String("playerSessionCount >>> 'x'")})
			return "SearchGameSessions (bad filter)", err, []string{"InvalidRequestException"}
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			_, err := c.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String("fleet-" + unknownID)})
			return "DescribeFleetEvents (unknown fleet)", err, []string{"NotFoundException"}
		},
		func(ctx context.Context, c *gamelift.Client, r *rand.Rand) (string, error, []string) {
			id, _ := l.recent.pick(r)
			if id == "" {
				return "", nil, nil
			}
			// Ended, full or closed by DENY_ALL by now, most likely; any answer will do.
			_, err := c.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id), PlayerId: aws.String("late")})
			return "CreatePlayerSession (recent session)", err, []string{"GameSessionFullException", "InvalidGameSessionStatusException"}
		},
	}
}

// readLoop makes rate random reads per second until ctx ends, on the
// keep-alive client or, for odd seeds, the client without keep-alive.
func (l *load) readLoop(ctx context.Context, seed uint64, rate float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	c := l.gl
	if seed%2 == 1 {
		c = l.churn
	}
	all := l.reads()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		op, err, want := all[r.IntN(len(all))](ctx, c, r)
		if op == "" || ctx.Err() != nil {
			continue
		}
		switch {
		case op == "CreatePlayerSession (recent session)":
			l.st.record(op, err, want...) // a seat may still be free
		case len(want) > 0:
			l.st.mustFail(op, err, want...)
		default:
			l.st.record(op, err)
		}
	}
}

// churnLoop opens and drops connections of every kind, four times a
// second: a TCP connection closed at once or after half a request, a
// /healthz on a connection of its own, a game server with a bad auth
// token, a call signed with a wrong secret, and event stream consumers
// that read a little and leave.
func (l *load) churnLoop(ctx context.Context, url string, lastSeq *atomic.Int64) {
	addr := strings.TrimPrefix(url, "http://")
	bad, _ := newClient(url, false, "wrong-secret")
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var sse sync.WaitGroup
	defer sse.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch i % 6 {
		case 0:
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			l.st.record("tcp connect and close", err)
			if err == nil {
				if i%12 == 0 {
					c.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"))
				}
				c.Close()
			}
		case 1:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
			req.Close = true
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			l.st.record("GET /healthz", err)
		case 2:
			o := sdkOptions()
			o.ConnectAttempts = 1
			_, err := gl.Init(gl.ServerParameters{WebSocketURL: l.p.url, ProcessID: "intruder", HostID: l.p.computes[0].name,
				FleetID: l.fleet, AuthToken: "not-a-token"}, o)
			l.st.mustFail("sdk Init (bad token)", err, "sdk local connection failed", "sdk unauthorized")
		case 3:
			_, err := bad.ListFleets(ctx, &gamelift.ListFleetsInput{})
			l.st.mustFail("ListFleets (wrong secret)", err, "InvalidSignatureException", "UnrecognizedClientException")
		case 4:
			sse.Add(1)
			go func() {
				defer sse.Done()
				_, err := consumeEvents(ctx, url, lastSeq.Load(), time.Duration(500+rand.IntN(2500))*time.Millisecond, nil)
				l.st.record("GET /events (short)", err)
			}()
		case 5:
			_, err := l.churn.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(l.fleet),
				StatusFilter: aws.String(string(types.GameSessionStatusActive))})
			l.st.record("DescribeGameSessions (new connection)", err)
		}
	}
}

// consumeEvents reads the event stream after seq for up to d (until ctx
// ends when d is 0), telling seen of each event's id, and returns the
// last id read.
func consumeEvents(ctx context.Context, url string, after int64, d time.Duration, seen func(int64)) (int64, error) {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events?after="+strconv.FormatInt(after, 10), nil)
	if err != nil {
		return after, err
	}
	req.SetBasicAuth(apitest.AccessKey, apitest.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return after, quietEnd(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return after, kindError("events: " + resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				after = n
				if seen != nil {
					seen(n)
				}
			}
		}
	}
	return after, quietEnd(ctx, sc.Err())
}

// quietEnd drops the error of a stream that ended because its time was up.
func quietEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
