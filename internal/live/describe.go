package live

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// List answers DescribeGameSessions as the store does
// (store.GameSessionTx.ListGameSessions): the same sessions, order,
// pages, tokens and errors. ok is false when memory cannot answer, and
// the store must:
//   - f.FleetID names a fleet memory does not know to exist, or is
//     loading;
//   - f.ID is not a live session (it may have ended), or comes with a
//     NextToken;
//   - the page may hold ended sessions (no StatusFilter, or
//     TERMINATED), and the fleet has some.
func (l *Sessions) List(f store.SessionFilter, p store.Page) (list []*game.GameSession, next string, ok bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	page, next, ok, err := l.list(f, p)
	return records(page), next, ok, err
}

// list is List, giving the entries of the page; the caller holds the
// read lock.
func (l *Sessions) list(f store.SessionFilter, p store.Page) (list []*entry, next string, ok bool, err error) {
	var fl *fleet
	if f.FleetID != "" {
		if fl = l.fleets[f.FleetID]; !fl.answers() {
			return nil, "", false, nil
		}
	}
	var cur store.SessionCursor
	if err := store.DecodeToken(p.Token, &cur); err != nil {
		return nil, "", true, err
	}
	match := func(e *entry) bool {
		return (f.Location == "" || e.s.Location == f.Location) && (f.Status == "" || e.s.Status == f.Status)
	}
	if f.ID != "" {
		e := l.byID[f.ID]
		if e == nil || p.Token != "" || !e.fleet.answers() {
			return nil, "", false, nil
		}
		if match(e) {
			list = []*entry{e}
		}
		return list, "", true, nil
	}
	if fl == nil || fl.ended && !liveStatus(f.Status) {
		return nil, "", false, nil
	}
	from := &fl.live
	if f.Status == game.SessionActive {
		from = &fl.active
	}
	var at *pos
	if p.Token != "" {
		at = &pos{cur.C, cur.PK}
	}
	n := store.PageLimit(p.Limit, 100, 1000)
	var page []*entry
	from.ascend(at, func(e *entry) bool {
		if match(e) {
			page = append(page, e)
		}
		return len(page) <= n
	})
	if len(page) > n {
		next = store.SessionCursor{C: page[n-1].created, PK: page[n-1].pk}.Token()
	}
	return page[:min(len(page), n)], next, true, nil
}

// records returns the records of a page's entries (nil for none).
func records(page []*entry) []*game.GameSession {
	if page == nil {
		return nil
	}
	list := make([]*game.GameSession, len(page))
	for i, e := range page {
		list[i] = e.s
	}
	return list
}

// liveStatus reports whether status is one a live session has.
func liveStatus(status string) bool {
	return status == game.SessionActivating || status == game.SessionActive || status == game.SessionTerminating
}
