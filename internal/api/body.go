package api

import (
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/anylift/anylift/internal/game"
)

// FreeBodyBytes is how much of a body is read before its signature is
// checked without counting against the unauthenticated budget: every
// ordinary request fits, so a client flooding the budget slows none of them.
const FreeBodyBytes = 16 << 10

// DefaultUnauthenticatedBytes is the budget when Options leaves it zero.
const DefaultUnauthenticatedBytes = 64 << 20

// budget caps the bytes held, across requests, by bodies read before
// their signature could be checked.
type budget struct {
	mu        sync.Mutex
	max, used int64
}

// take reserves n bytes, or reports false at once when they are not free.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// InUse is how many bytes are reserved now.
func (b *budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// unavailable is the 503 of a node that cannot serve now; clients retry
// it. It is InternalServiceException, which every operation's model
// lists, so the AWS SDKs raise their typed class.
func unavailable(message string) *authError {
	return &authError{"InternalServiceException", http.StatusServiceUnavailable, message}
}

// readBody authenticates r and reads its body, and returns who signed
// it with the body: what can be checked from
// the headers is checked before a byte of the body is read; a body whose
// signature can only be checked once it is read holds the unauthenticated
// budget while it is read, beyond FreeBodyBytes.
//
// A request refused before its body is read (too large, not
// authenticated, no budget) has what the client is still sending
// discarded first, within bounds (linger): a client that sends its whole
// body before reading the answer, as most do, then hears the answer
// rather than a reset.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, max int64) (*Signed, []byte, error) {
	if r.ContentLength > max {
		linger(w, r)
		return nil, nil, game.Errorf(game.InvalidRequest, "request body exceeds %d bytes", max)
	}
	signed, aerr := h.verifier.PreVerify(r)
	if aerr != nil {
		linger(w, r)
		return nil, nil, aerr
	}
	if !signed.Authenticated() {
		need := r.ContentLength
		if need < 0 {
			need = max // chunked: as much as may come
		}
		if need > FreeBodyBytes {
			if !h.unauth.take(need) {
				linger(w, r)
				return nil, nil, unavailable("Too many unauthenticated request bytes in flight on this node; retry shortly.")
			}
			defer h.unauth.give(need)
		}
	}
	body, err := readAll(r, max)
	if err != nil {
		return nil, nil, err
	}
	if aerr := h.verifier.Finish(r, signed, body); aerr != nil {
		return nil, nil, aerr
	}
	return signed, body, nil
}

// readAll reads r's body, of at most max bytes: into a buffer of its
// declared length, or growing as it comes when chunked.
func readAll(r *http.Request, max int64) ([]byte, error) {
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, game.Errorf(game.InvalidRequest, "request body exceeds %d bytes", max)
		}
		return nil, game.Errorf(game.InvalidRequest, "could not read request body")
	}
	return body, nil
}
