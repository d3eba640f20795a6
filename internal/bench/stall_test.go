package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/anylift/anylift/internal/apitest"
)

// StalledConns is how many connections stall while
// BenchmarkDescribeGameSessionsWhileStalled measures.
const StalledConns = 1000

// BenchmarkDescribeGameSessionsWhileStalled measures DescribeGameSessions
// by id on SQLite with no other client, then while StalledConns
// connections each hold a request open: signed headers declaring a 16 KiB
// body of which 8 KiB come, then nothing (held until the read timeout,
// far longer than the run). Compare the p99 of the two.
//
//	go test ./internal/bench -run '^$' -bench 'Ceiling|WhileStalled' -benchtime 20000x
func BenchmarkDescribeGameSessionsWhileStalled(b *testing.B) {
	raiseFileLimit(b)
	s := seed(b, "sqlite", "")
	for _, n := range []int{0, StalledConns} {
		b.Run(fmt.Sprintf("stalled=%d", n), func(b *testing.B) {
			conns := stall(b, s.url, n)
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			c := newClient(s.url)
			run(b, func(r *rand.Rand) error {
				id := s.ids[r.IntN(len(s.ids))]
				return c.call("DescribeGameSessions", []byte(`{"GameSessionId": "`+id+`"}`))
			})
			if st := s.srv.ListenerStats("API"); n > 0 && st.Open < n {
				b.Errorf("only %d connections open at the end: the stalled ones were cut (%+v)", st.Open, st)
			}
		})
	}
}

// stall opens n connections to url, each sending a signed request's head
// and half of its 16 KiB body.
func stall(b *testing.B, url string, n int) []net.Conn {
	head, body := stalledRequest(b, url)
	addr := strings.TrimPrefix(url, "http://")
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(append(append([]byte{}, head...), body[:len(body)/2]...)); err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	return conns
}

func stalledRequest(b *testing.B, url string) (head, body []byte) {
	body = append([]byte("{}"), bytes.Repeat([]byte(" "), 16<<10-2)...)
	req, err := http.NewRequest(http.MethodPost, url+"/", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", "GameLift.ListFleets")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	sum := sha256.Sum256(body)
	cl := req.ContentLength
	req.ContentLength = 0
	c := newClient(url)
	if err := c.signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: apitest.AccessKey, SecretAccessKey: apitest.SecretKey},
		req, hex.EncodeToString(sum[:]), "gamelift", apitest.Region, time.Now()); err != nil {
		b.Fatal(err)
	}
	req.ContentLength = cl
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		b.Fatal(err)
	}
	h, _, _ := bytes.Cut(buf.Bytes(), []byte("\r\n\r\n"))
	return append(h, "\r\n\r\n"...), body
}
