package live_test

import (
	"bytes"
	"testing"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sessions"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// encodedAgrees fails unless the memory's encoded page for the same
// question (ask) is the store's sessions encoded now, in both protocols,
// with the same token and error. It runs after every page the agreement
// tests compare, so the encodings the memory keeps are checked after
// every kind of write, failed transactions and reloads included.
func encodedAgrees(t testing.TB, what string, ask func(p wire.Protocol) (wire.EncodedList[wire.GameSession], string, bool, error),
	want []*game.GameSession, wantNext string, wantErr error) {
	t.Helper()
	for _, p := range []wire.Protocol{wire.JSON, wire.CBOR} {
		list, next, ok, err := ask(p)
		if !ok {
			t.Fatalf("%s, %v: the memory answered records but not their encodings", what, p)
		}
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || next != wantNext {
			t.Fatalf("%s, %v: encoded page: token %q error %v; store: token %q error %v", what, p, next, err, wantNext, wantErr)
		}
		if len(list) != len(want) {
			t.Fatalf("%s, %v: %d sessions encoded, store %d", what, p, len(list), len(want))
		}
		for i, s := range want {
			e, err := sessions.EncodeGameSession(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if list[i].Protocol() != p || !bytes.Equal(list[i].Bytes(), e.Bytes()) {
				t.Fatalf("%s, %v: session %d (%s) encoded\n%q\nstore's encoded now\n%q", what, p, i, s.IDString, list[i].Bytes(), e.Bytes())
			}
		}
	}
}

// searchEncoded and listEncoded ask w's memory for encoded pages.
func (w *world) searchEncoded(q store.SearchQuery, pg store.Page) func(wire.Protocol) (wire.EncodedList[wire.GameSession], string, bool, error) {
	return func(p wire.Protocol) (wire.EncodedList[wire.GameSession], string, bool, error) {
		return w.mem.SearchEncoded(q, pg, p, sessions.EncodeGameSession)
	}
}

func (w *world) listEncoded(f store.SessionFilter, pg store.Page) func(wire.Protocol) (wire.EncodedList[wire.GameSession], string, bool, error) {
	return func(p wire.Protocol) (wire.EncodedList[wire.GameSession], string, bool, error) {
		return w.mem.ListEncoded(f, pg, p, sessions.EncodeGameSession)
	}
}
