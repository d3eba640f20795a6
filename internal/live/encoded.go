package live

import (
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// An Encoder writes one session's answer in protocol p: the bytes
// wire.Encode writes for the session's wire shape (control gives it:
// sessions.EncodeGameSession). It must depend on the record and p alone,
// since what it builds is kept and written in later answers.
type Encoder = func(s *game.GameSession, p wire.Protocol) (wire.Encoded[wire.GameSession], error)

// answers is what an entry keeps of its session's answers: one encoding
// per protocol (indexed by wire.Protocol), each built on the first read
// asking for it. It is never changed once published: a new encoding
// publishes a new answers.
type answers [2]wire.Encoded[wire.GameSession]

// SearchEncoded is Search with each session of the page as its answer
// encoded in protocol p: the encoding the session keeps, built with enc
// on the first read that asks for it and kept until the session changes.
// A page is then written without encoding its sessions again
// (wire.SearchGameSessionsEncoded).
func (l *Sessions) SearchEncoded(q store.SearchQuery, pg store.Page, p wire.Protocol, enc Encoder) (list wire.EncodedList[wire.GameSession], next string, ok bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	page, next, ok, err := l.search(q, pg)
	if !ok || err != nil {
		return nil, next, ok, err
	}
	list, err = encodePage(page, p, enc)
	return list, next, true, err
}

// ListEncoded is List with each session of the page as its answer
// encoded in protocol p, as SearchEncoded.
func (l *Sessions) ListEncoded(f store.SessionFilter, pg store.Page, p wire.Protocol, enc Encoder) (list wire.EncodedList[wire.GameSession], next string, ok bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	page, next, ok, err := l.list(f, pg)
	if !ok || err != nil {
		return nil, next, ok, err
	}
	list, err = encodePage(page, p, enc)
	return list, next, true, err
}

// encodePage returns the answers of a page's entries in protocol p. The
// caller holds the read lock.
func encodePage(page []*entry, p wire.Protocol, enc Encoder) (wire.EncodedList[wire.GameSession], error) {
	list := make(wire.EncodedList[wire.GameSession], len(page))
	for i, e := range page {
		a, err := e.answer(p, enc)
		if err != nil {
			return nil, err
		}
		list[i] = a
	}
	return list, nil
}

// answer returns e's session encoded in protocol p, from what e keeps or
// built with enc and kept. The caller holds the read lock, so the record
// cannot change meanwhile (Apply replaces it under the write lock, and
// drops what was kept); readers building the same answer at once each
// build it, and one of theirs is kept.
func (e *entry) answer(p wire.Protocol, enc Encoder) (wire.Encoded[wire.GameSession], error) {
	if p != wire.JSON && p != wire.CBOR {
		return enc(e.s, p) // not one kept
	}
	if kept := e.enc.Load(); kept != nil && !kept[p].IsZero() {
		return kept[p], nil
	}
	a, err := enc(e.s, p)
	if err != nil {
		return a, err
	}
	for {
		old := e.enc.Load()
		if old != nil && !old[p].IsZero() {
			return old[p], nil
		}
		var next answers
		if old != nil {
			next = *old
		}
		next[p] = a
		if e.enc.CompareAndSwap(old, &next) {
			return a, nil
		}
	}
}
