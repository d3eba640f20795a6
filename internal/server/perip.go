package server

import (
	"container/list"
	"net"
	"net/netip"
	"time"
)

// ipTable holds one listener's per-address bounds (Limits.MaxConnsPerIP,
// ConnRatePerIP, ConnBurstPerIP, PerIPExempt, LimitLoopback) and what
// each remote address holds now. It is guarded by its limitListener's mu;
// a nil *ipTable bounds nothing.
type ipTable struct {
	maxOpen       int     // HTTP connections per address; 0: no cap
	rate, burst   float64 // new connections per second and at once; rate 0: no bound
	exempt        []netip.Prefix
	limitLoopback bool

	byAddr  map[netip.Addr]*ipEntry
	sweepAt int // sweep the table when it grows to this many entries
}

// minSweep is the table size below which no sweep runs.
const minSweep = 1024

// newIPTable is the per-address table for l's bounds, or nil when l
// bounds no address.
func newIPTable(l Limits) *ipTable {
	t := &ipTable{exempt: l.PerIPExempt, limitLoopback: l.LimitLoopback,
		byAddr: map[netip.Addr]*ipEntry{}, sweepAt: minSweep}
	if l.MaxConnsPerIP > 0 {
		t.maxOpen = l.MaxConnsPerIP
	}
	if l.ConnRatePerIP > 0 {
		t.rate, t.burst = l.ConnRatePerIP, float64(max(l.ConnBurstPerIP, 1))
	}
	if t.maxOpen == 0 && t.rate == 0 {
		return nil
	}
	return t
}

// ipEntry is what one remote address holds on a listener: its open HTTP
// connections (upgraded ones leave the count, as they leave the
// listener's), those of them idle, longest idle first, and its bucket of
// new connections.
type ipEntry struct {
	open   int
	idle   *list.List // of *limitedConn
	tokens float64    // as of at
	at     time.Time
}

// key is the address remote is counted under, and whether the bounds
// apply to it at all: not to exempt addresses, nor to loopback ones
// unless limitLoopback. An IPv6 address counts under its /64, the block
// one host usually holds.
func (t *ipTable) key(remote net.Addr) (netip.Addr, bool) {
	if t == nil {
		return netip.Addr{}, false
	}
	tcp, ok := remote.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Addr{}, false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() && !t.limitLoopback {
		return netip.Addr{}, false
	}
	for _, p := range t.exempt {
		if p.Contains(ip) {
			return netip.Addr{}, false
		}
	}
	if ip.Is6() {
		ip = netip.PrefixFrom(ip, 64).Masked().Addr()
	}
	return ip, true
}

// entry is addr's entry, made with a full bucket when it has none.
// Entries that hold nothing and whose bucket has refilled are swept when
// the table has doubled since the last sweep, so the table stays within
// twice the addresses active over the last burst/rate seconds.
func (t *ipTable) entry(addr netip.Addr, now time.Time) *ipEntry {
	if e := t.byAddr[addr]; e != nil {
		return e
	}
	if len(t.byAddr) >= t.sweepAt {
		t.sweep(now)
		t.sweepAt = max(minSweep, 2*len(t.byAddr))
	}
	e := &ipEntry{idle: list.New(), tokens: t.burst, at: now}
	t.byAddr[addr] = e
	return e
}

// sweep forgets the entries that hold nothing.
func (t *ipTable) sweep(now time.Time) {
	for addr, e := range t.byAddr {
		if t.spent(e, now) {
			delete(t.byAddr, addr)
		}
	}
}

// spent reports whether e holds nothing: no connection, and a bucket
// that has refilled (forgetting it then changes nothing).
func (t *ipTable) spent(e *ipEntry, now time.Time) bool {
	return e.open == 0 && (t.rate == 0 || e.tokens+now.Sub(e.at).Seconds()*t.rate >= t.burst)
}

// take spends one of e's tokens for a new connection; it reports false
// when the bucket is empty.
func (t *ipTable) take(e *ipEntry, now time.Time) bool {
	if t.rate == 0 {
		return true
	}
	if elapsed := now.Sub(e.at); elapsed > 0 {
		e.tokens = min(t.burst, e.tokens+elapsed.Seconds()*t.rate)
		e.at = now
	}
	if e.tokens < 1 {
		return false
	}
	e.tokens--
	return true
}

// full reports whether e holds as many connections as an address may.
func (t *ipTable) full(e *ipEntry) bool {
	return t.maxOpen > 0 && e.open >= t.maxOpen
}

// release drops one connection from e's count, forgetting e when it then
// holds nothing.
func (t *ipTable) release(addr netip.Addr, e *ipEntry, now time.Time) {
	e.open--
	if t.spent(e, now) && t.byAddr[addr] == e {
		delete(t.byAddr, addr)
	}
}
