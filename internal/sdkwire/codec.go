package sdkwire

import (
	"encoding/json"
	"fmt"
)

// Header is the envelope every frame carries beside its payload.
type Header struct {
	Action       string `json:"Action,omitempty"`
	RequestId    string `json:"RequestId,omitempty"`
	StatusCode   int    `json:"StatusCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// Error is a frame the decoder refused, or a request the service refused.
// Status is the StatusCode to answer with (400 for a malformed request).
// Garbage marks a frame that is not a JSON object at all: there is nothing
// to answer, and the endpoint closes the connection instead.
type Error struct {
	Status  int
	Message string
	Garbage bool
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error answering with status.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error { return Errorf(400, format, args...) }

// EncodeRequest frames r as a request with the given RequestId.
func EncodeRequest(requestID string, r Request) ([]byte, error) {
	return encode(Header{Action: r.Action(), RequestId: requestID}, r)
}

// EncodeResponse frames a successful answer to a request: the request's
// Action and RequestId, StatusCode 200, and result's members (result may be nil).
func EncodeResponse(action, requestID string, result any) ([]byte, error) {
	return encode(Header{Action: action, RequestId: requestID, StatusCode: StatusOK}, result)
}

// EncodeError frames a refused request. An Action naming a push is never
// echoed: an SDK would take the frame for that push.
func EncodeError(action, requestID string, status int, message string) []byte {
	if IsPushAction(action) {
		action = ""
	}
	b, _ := encode(Header{Action: action, RequestId: requestID, StatusCode: status, ErrorMessage: message}, nil)
	return b
}

// EncodePush frames a push: its Action, StatusCode 200, no RequestId.
func EncodePush(p Push) ([]byte, error) {
	return encode(Header{Action: p.Action(), StatusCode: StatusOK}, p)
}

// encode writes h's members followed by body's members as one JSON object.
func encode(h Header, body any) ([]byte, error) {
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return head, nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("sdkwire: %T does not encode as an object", body)
	}
	if len(b) == 2 {
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(b))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	return append(out, b[1:]...), nil
}

// Frame is a decoded JSON object: its envelope and all its members.
type Frame struct {
	Header
	members map[string]json.RawMessage
}

// DecodeFrame parses data as one JSON object and reads its envelope. A frame
// that is not a JSON object gives an *Error with Garbage set; a wrongly
// typed envelope member gives an *Error with status 400 (the Header read so
// far is still returned, so the caller can answer).
func DecodeFrame(data []byte) (*Frame, error) {
	f := &Frame{}
	if err := json.Unmarshal(data, &f.members); err != nil || f.members == nil {
		return nil, &Error{Status: 400, Message: "frame is not a JSON object", Garbage: true}
	}
	var hs headerStrict
	err := decodeStrict(f.members, &hs)
	f.Header = Header(hs)
	if err != nil {
		return f, err
	}
	return f, nil
}

// headerStrict is Header with the decoder's rules.
type headerStrict struct {
	Action       string `json:"Action"`
	RequestId    string `json:"RequestId"`
	StatusCode   int    `json:"StatusCode"`
	ErrorMessage string `json:"ErrorMessage"`
}

// Decode reads the frame's payload members into v, a pointer to one of this
// package's message structs, strictly: a member of the wrong JSON type, a
// required member absent, null or empty, or a value outside its enum gives
// an *Error with status 400 naming the member. Unknown members are ignored
// (newer SDKs may add some); null counts as absent.
func (f *Frame) Decode(v any) error {
	if err := decodeStrict(f.members, v); err != nil {
		return err
	}
	if c, ok := v.(interface{ check() error }); ok {
		return c.check()
	}
	return nil
}

// DecodeRequest decodes a frame a process sent. On error the returned Frame,
// when not nil, holds what could be read of the envelope so the caller can
// answer with EncodeError; see DecodeFrame for garbage.
func DecodeRequest(data []byte) (*Frame, Request, error) {
	f, err := DecodeFrame(data)
	if err != nil {
		return f, nil, err
	}
	if f.Action == "" {
		return f, nil, badRequest("Action is required")
	}
	if f.RequestId == "" {
		return f, nil, badRequest("RequestId is required")
	}
	r := newRequest(f.Action)
	if r == nil {
		return f, nil, badRequest("unknown Action %q", f.Action)
	}
	if err := f.Decode(r); err != nil {
		return f, nil, err
	}
	return f, r, nil
}

// DecodePush decodes the payload of a frame whose Action is a push.
func DecodePush(f *Frame) (Push, error) {
	var p Push
	switch f.Action {
	case ActionCreateGameSession:
		p = &CreateGameSession{}
	case ActionUpdateGameSession:
		p = &UpdateGameSession{}
	case ActionTerminateProcess:
		p = &TerminateProcess{}
	case ActionRefreshConnection:
		p = &RefreshConnection{}
	default:
		return nil, badRequest("unknown push Action %q", f.Action)
	}
	if err := f.Decode(p); err != nil {
		return nil, err
	}
	return p, nil
}

// newRequest returns an empty request struct for action, or nil.
func newRequest(action string) Request {
	switch action {
	case ActionActivateServerProcess:
		return &ActivateServerProcess{}
	case ActionHeartbeatServerProcess:
		return &HeartbeatServerProcess{}
	case ActionActivateGameSession:
		return &ActivateGameSession{}
	case ActionUpdatePlayerSessionCreationPolicy:
		return &UpdatePlayerSessionCreationPolicy{}
	case ActionAcceptPlayerSession:
		return &AcceptPlayerSession{}
	case ActionRemovePlayerSession:
		return &RemovePlayerSession{}
	case ActionDescribePlayerSessions:
		return &DescribePlayerSessions{}
	case ActionStartMatchBackfill:
		return &StartMatchBackfill{}
	case ActionStopMatchBackfill:
		return &StopMatchBackfill{}
	case ActionGetComputeCertificate:
		return &GetComputeCertificate{}
	case ActionGetFleetRoleCredentials:
		return &GetFleetRoleCredentials{}
	case ActionTerminateServerProcess:
		return &TerminateServerProcess{}
	}
	return nil
}

// check enforces DescribePlayerSessions' rule that exactly one of the
// three ids is given, and that Limit is not negative.
func (r *DescribePlayerSessions) check() error {
	n := 0
	for _, s := range []string{r.GameSessionId, r.PlayerId, r.PlayerSessionId} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return badRequest("exactly one of GameSessionId, PlayerId and PlayerSessionId is required")
	}
	if r.Limit < 0 {
		return badRequest("Limit must not be negative")
	}
	return nil
}
