package server_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
)

// Linux routes all of 127.0.0.0/8 to the loopback interface, so a client
// bound to 127.0.0.2 and one bound to 127.0.0.3 are two addresses to the
// server. The per-address bounds exempt loopback unless LimitLoopback.
const (
	addrA = "127.0.0.2"
	addrB = "127.0.0.3"
)

// dialFrom connects to addr from the local address ip.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// callOn makes a signed ListFleets call on c and reports its status, or 0
// when c was closed without an answer.
func callOn(t *testing.T, env *apitest.Env, c net.Conn) int {
	t.Helper()
	body := []byte(`{}`)
	c.Write(append(signedHead(t, env, body), body...))
	return readStatus(t, c)
}

// readStatus reads one answer from c: its status, or 0 when c was closed
// without one.
func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitLimit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("no answer, and the connection stayed open")
		}
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// busyFrom opens a connection from ip with a request in progress: a
// signed call whose body has begun (the server asked for it with 100
// Continue) and stalls. finish sends the rest and reports the status.
func busyFrom(t *testing.T, env *apitest.Env, ip string) (finish func() int) {
	t.Helper()
	c := dialFrom(t, ip, env.Server.Addr())
	body := bytes.Repeat([]byte(" "), 100)
	head := signedHead(t, env, body)
	c.Write(append(head[:len(head)-2], "Expect: 100-continue\r\n\r\n"...))
	c.SetReadDeadline(time.Now().Add(waitLimit))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}
	br.ReadString('\n') // the blank line ending the interim answer
	c.Write(body[:1])
	return func() int {
		c.Write(body[1:])
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("a busy connection lost its answer: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}

// An address holding its most connections, all busy, has its next one
// closed at once, while another address still connects and is served;
// the busy connections finish their requests.
func TestAddressAtItsCapIsRefusedAlone(t *testing.T) {
	const perIP = 3
	env := startLimited(t, server.Limits{MaxConnsPerIP: perIP, LimitLoopback: true})
	var busy []func() int
	for range perIP {
		busy = append(busy, busyFrom(t, env, addrA))
	}
	refused := dialFrom(t, addrA, env.Server.Addr())
	waitClosed(t, refused, "a connection beyond its address's cap, every one busy")

	if got := callOn(t, env, dialFrom(t, addrB, env.Server.Addr())); got != http.StatusOK {
		t.Errorf("another address answered %d", got)
	}
	describeWorks(t, env, "from 127.0.0.1 while 127.0.0.2 is at its cap")
	for i, finish := range busy {
		if got := finish(); got != http.StatusOK {
			t.Errorf("busy connection %d answered %d", i, got)
		}
	}
	st := env.Server.ListenerStats("API")
	if st.RefusedPerIP != 1 || st.Refused != 0 || st.Evicted != 0 || st.EvictedPerIP != 0 {
		t.Errorf("stats %+v: want one refusal for the address, nothing else", st)
	}
}

// At its cap, an address's new connection closes that address's
// connection idle longest, never another address's, even one idle
// longer.
func TestAddressAtItsCapClosesItsOwnIdlest(t *testing.T) {
	env := startLimited(t, server.Limits{MaxConns: 8, MaxConnsPerIP: 2, LimitLoopback: true})
	addr := env.Server.Addr()
	other := dialFrom(t, addrB, addr) // idle longest of all
	first := dialFrom(t, addrA, addr)
	dialFrom(t, addrA, addr)
	dialFrom(t, addrA, addr)
	waitClosed(t, first, "the address's idlest connection")
	if got := callOn(t, env, other); got != http.StatusOK {
		t.Errorf("the other address's idle connection answered %d", got)
	}
	st := env.Server.ListenerStats("API")
	if st.EvictedPerIP != 1 || st.Evicted != 0 || st.RefusedPerIP != 0 {
		t.Errorf("stats %+v: want one eviction within the address", st)
	}
}

// An address opening connections faster than its rate has the excess
// closed at once; another address is unaffected, and the address gets in
// again once its bucket has refilled (time is the test's clock).
func TestAddressOpeningTooFastIsRefused(t *testing.T) {
	clock := &testclock.Offset{}
	env := startLimited(t, server.Limits{ConnRatePerIP: 0.01, ConnBurstPerIP: 2, LimitLoopback: true},
		func(c *server.Config) { c.Now = clock.Now })
	addr := env.Server.Addr()
	for i := range 2 {
		if got := callOn(t, env, dialFrom(t, addrA, addr)); got != http.StatusOK {
			t.Fatalf("connection %d within the burst answered %d", i, got)
		}
	}
	waitClosed(t, dialFrom(t, addrA, addr), "a connection beyond the burst")
	if got := callOn(t, env, dialFrom(t, addrB, addr)); got != http.StatusOK {
		t.Errorf("another address answered %d", got)
	}
	clock.Advance(100 * time.Second) // one token at 0.01 a second
	if got := callOn(t, env, dialFrom(t, addrA, addr)); got != http.StatusOK {
		t.Errorf("after the bucket refilled, answered %d", got)
	}
	if st := env.Server.ListenerStats("API"); st.RefusedRate != 1 {
		t.Errorf("stats %+v: want one refusal for the rate", st)
	}
}

// Loopback is exempt by default: game servers and an agent on the node's
// machine share 127.0.0.1, and the benchmarks connect thousands of
// processes from it. So is an address given in PerIPExempt.
func TestExemptAddressesAreNotBounded(t *testing.T) {
	for name, l := range map[string]server.Limits{
		"loopback":    {MaxConnsPerIP: 1, ConnRatePerIP: 0.01, ConnBurstPerIP: 1},
		"PerIPExempt": {MaxConnsPerIP: 1, ConnRatePerIP: 0.01, ConnBurstPerIP: 1, LimitLoopback: true, PerIPExempt: exemptA},
	} {
		t.Run(name, func(t *testing.T) {
			env := startLimited(t, l)
			var busy []func() int
			for range 3 {
				busy = append(busy, busyFrom(t, env, addrA))
			}
			for _, finish := range busy {
				if got := finish(); got != http.StatusOK {
					t.Errorf("answered %d", got)
				}
			}
			if st := env.Server.ListenerStats("API"); st.RefusedPerIP+st.RefusedRate+st.EvictedPerIP != 0 {
				t.Errorf("stats %+v: an exempt address was bounded", st)
			}
		})
	}
}

var exemptA = []netip.Prefix{netip.MustParsePrefix(addrA + "/32")}
