package server

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// An address is counted under itself (IPv4, mapped IPv4 unmapped) or its
// /64 (IPv6); loopback and exempt addresses are not counted at all.
func TestPerIPKeys(t *testing.T) {
	tbl := newIPTable(Limits{MaxConnsPerIP: 1, PerIPExempt: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	for remote, want := range map[string]string{
		"192.0.2.7:1234":              "192.0.2.7",
		"[::ffff:192.0.2.7]:1234":     "192.0.2.7",
		"[2001:db8:1:2:aaaa::1]:1234": "2001:db8:1:2::",
		"[fe80::1%eth0]:1234":         "fe80::",
		"10.1.2.3:1234":               "",
		"127.0.0.2:1234":              "",
		"[::1]:1234":                  "",
		"[2001:db8:1:3:aaaa::1]:1234": "2001:db8:1:3::",
		"[::ffff:10.1.1.1]:1234":      "",
	} {
		key, limited := tbl.key(addr(t, remote))
		if got := ""; limited {
			got = key.String()
			if got != want {
				t.Errorf("%s counts under %s, want %q", remote, got, want)
			}
		} else if want != "" {
			t.Errorf("%s is not counted, want %s", remote, want)
		}
	}
	loop := newIPTable(Limits{MaxConnsPerIP: 1, LimitLoopback: true})
	if key, limited := loop.key(addr(t, "127.0.0.2:1")); !limited || key.String() != "127.0.0.2" {
		t.Errorf("with LimitLoopback, 127.0.0.2: %v %v", key, limited)
	}
	if newIPTable(Limits{MaxConnsPerIP: -1, ConnRatePerIP: -1}) != nil {
		t.Error("a table with nothing to bound")
	}
}

func addr(t *testing.T, s string) net.Addr {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return net.TCPAddrFromAddrPort(ap)
}

// Entries holding nothing are forgotten once their bucket has refilled,
// on release or in a sweep; an entry still draining its bucket is kept,
// so closing connections does not reset an address's rate.
func TestPerIPEntriesAreForgotten(t *testing.T) {
	tbl := newIPTable(Limits{MaxConnsPerIP: 4, ConnRatePerIP: 1, ConnBurstPerIP: 2})
	now := time.Unix(1000, 0)
	a := netip.MustParseAddr("192.0.2.1")
	e := tbl.entry(a, now)
	if !tbl.take(e, now) || !tbl.take(e, now) || tbl.take(e, now) {
		t.Fatal("a burst of 2 let through other than 2")
	}
	e.open++
	tbl.release(a, e, now)
	if tbl.byAddr[a] != e {
		t.Fatal("an entry with an empty bucket was forgotten")
	}
	if tbl.take(tbl.entry(a, now), now) {
		t.Fatal("the bucket was reset")
	}
	tbl.sweep(now.Add(2 * time.Second))
	if len(tbl.byAddr) != 0 {
		t.Errorf("a refilled entry holding nothing was kept: %d", len(tbl.byAddr))
	}
}

// A repeated event is logged at once, then at most once a period with
// the count since the last line.
func TestPeriodicLog(t *testing.T) {
	var p periodicLog
	now := time.Unix(1000, 0)
	for i, step := range []struct {
		at   time.Duration
		n    int64
		logs bool
	}{{0, 1, true}, {time.Second, 0, false}, {30 * time.Second, 0, false}, {logPeriod, 3, true}, {logPeriod + 1, 0, false}} {
		n, ok := p.note(now.Add(step.at))
		if n != step.n || ok != step.logs {
			t.Errorf("event %d: %d %v, want %d %v", i, n, ok, step.n, step.logs)
		}
	}
}
