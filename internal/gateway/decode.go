package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/anylift/anylift/sdk/playerwire"
)

// Body limits: a create may carry GameSessionData (up to 262144
// characters, which JSON escaping can grow); everything else is small.
const (
	maxCreateBody = 1 << 20
	maxSmallBody  = 16 << 10
)

// decodeBody reads one JSON object of at most max bytes into v: unknown
// members, trailing data and a body over the limit are InvalidRequest. An
// empty body is the empty object.
func decodeBody(r io.Reader, max int64, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return fail(http.StatusBadRequest, CodeInvalidRequest, "The request body could not be read")
	}
	return decodeJSON(data, max, v)
}

func decodeJSON(data []byte, max int64, v any) error {
	if int64(len(data)) > max {
		return fail(http.StatusRequestEntityTooLarge, CodeInvalidRequest, "The request body is too large")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(http.StatusBadRequest, CodeInvalidRequest, "The request body is not valid: "+jsonProblem(err))
	}
	if dec.More() {
		return fail(http.StatusBadRequest, CodeInvalidRequest, "The request body must hold one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(http.StatusBadRequest, CodeInvalidRequest, "The request body must hold one JSON object")
	}
	return nil
}

// jsonProblem words a decoding error without echoing the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON"
	case errors.As(err, &te):
		if te.Field != "" {
			return "member " + clip(te.Field) + " has the wrong type"
		}
		return "a JSON object is required"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown member " + clip(strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return "malformed JSON"
}

// clip shortens an echoed name.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

// decodeCreate reads a create request: exactly one of FleetId, AliasId
// and QueueName; the rest is checked against GameLift's model later.
func decodeCreate(r io.Reader) (*playerwire.CreateSessionRequest, error) {
	var req playerwire.CreateSessionRequest
	if err := decodeBody(r, maxCreateBody, &req); err != nil {
		return nil, err
	}
	n := 0
	for _, s := range []string{req.FleetId, req.AliasId, req.QueueName} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, "Name exactly one of FleetId, AliasId and QueueName")
	}
	if req.MaximumPlayerSessionCount < 1 {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, "MaximumPlayerSessionCount must be at least 1: the session needs a seat for you")
	}
	return &req, nil
}

// decodeSearch reads a search request: exactly one of FleetId and AliasId.
func decodeSearch(r io.Reader) (*playerwire.SearchRequest, error) {
	var req playerwire.SearchRequest
	if err := decodeBody(r, maxSmallBody, &req); err != nil {
		return nil, err
	}
	if (req.FleetId == "") == (req.AliasId == "") {
		return nil, fail(http.StatusBadRequest, CodeInvalidRequest, "Name exactly one of FleetId and AliasId")
	}
	return &req, nil
}

func decodeJoin(r io.Reader) (*playerwire.JoinRequest, error) {
	var req playerwire.JoinRequest
	if err := decodeBody(r, maxSmallBody, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

func decodeLeave(r io.Reader) (*playerwire.LeaveRequest, error) {
	var req playerwire.LeaveRequest
	if err := decodeBody(r, maxSmallBody, &req); err != nil {
		return nil, err
	}
	return &req, nil
}
