package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/fxamacker/cbor/v2"
)

// Protocol is one of the two control-plane wire protocols.
type Protocol int

const (
	JSON Protocol = iota // AWS JSON 1.1: POST / with X-Amz-Target
	CBOR                 // Smithy RPC v2 CBOR: POST /service/GameLift/operation/<Op>
)

// Content types answered in each protocol.
const (
	ContentTypeJSON = "application/x-amz-json-1.1"
	ContentTypeCBOR = "application/cbor"
)

// ContentType is the Content-Type of bodies in protocol p.
func (p Protocol) ContentType() string {
	if p == CBOR {
		return ContentTypeCBOR
	}
	return ContentTypeJSON
}

func (p Protocol) String() string {
	if p == CBOR {
		return "rpc-v2-cbor"
	}
	return "awsJson1_1"
}

// DecodeError says why a request body could not be decoded into its input
// shape. Member is the offending member path when known.
type DecodeError struct {
	Member string
	Reason string
}

func (e *DecodeError) Error() string {
	if e.Member != "" {
		return fmt.Sprintf("invalid value for member '%s': %s", e.Member, e.Reason)
	}
	return "malformed request body: " + e.Reason
}

// MaxNesting is the deepest nesting of objects and arrays (maps and
// arrays in CBOR) a request body may have. GameLift's deepest inputs
// (matchmaking player attributes) nest six levels.
const MaxNesting = 32

var (
	cborDec cbor.DecMode
	cborEnc cbor.EncMode
)

func init() {
	var err error
	cborDec, err = cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthAllowed,
		MaxNestedLevels:   MaxNesting,
		MaxArrayElements:  65536,
		MaxMapPairs:       65536,
		FieldNameMatching: cbor.FieldNameMatchingCaseSensitive,
		UTF8:              cbor.UTF8RejectInvalid,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	cborEnc, err = cbor.EncOptions{}.EncMode()
	if err != nil {
		panic(err)
	}
}

// Decode reads body, in protocol p, into the input shape v (a pointer to a
// struct). An empty body is an empty input.
func Decode(p Protocol, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if p == CBOR {
		return decodeCBOR(body, v)
	}
	return decodeJSON(body, v)
}

func decodeJSON(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &DecodeError{Reason: "the body must be a JSON object"}
	}
	if err := checkJSONDepth(body, MaxNesting); err != nil {
		return err
	}
	// A body that is one JSON value is decoded in place. Unmarshal checks
	// the whole body's syntax before it fills v, so a body it finds
	// malformed (among them one with data after the object) leaves v as
	// it was and is read again by the stream decoder, whose errors say
	// where; any other error is the same from both.
	if err := json.Unmarshal(body, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return decodeJSONStream(body, v)
		}
		return decodeJSONError(body, v, err)
	}
	return checkJSONKeys(body, reflect.TypeOf(v))
}

// decodeJSONStream decodes the JSON object at the start of body into v,
// refusing anything but white space after it.
func decodeJSONStream(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return decodeJSONError(body, v, err)
	}
	// Anything but white space after the object (what Token would read
	// rather than io.EOF) is refused.
	for _, c := range body[dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return &DecodeError{Reason: "unexpected data after the JSON object"}
		}
	}
	return checkJSONKeys(body, reflect.TypeOf(v))
}

func decodeJSONError(body []byte, v any, err error) error {
	var te *timeError
	if errors.As(err, &te) {
		return &DecodeError{Member: timeMember(JSON, body, v), Reason: te.reason}
	}
	return jsonError(err)
}

// checkJSONDepth refuses a body nesting objects and arrays deeper than
// max, in one pass and before any decoding: the decoders' work grows with
// depth. Strings are skipped; malformed JSON is left to the decoder.
func checkJSONDepth(body []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range body {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return &DecodeError{Reason: fmt.Sprintf("JSON nested deeper than %d levels", max)}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := goKind(te.Type.String())
		if want == "an integer" && isIntegerText(strings.TrimPrefix(te.Value, "number ")) {
			return &DecodeError{Member: te.Field, Reason: fmt.Sprintf("%s is out of range for %s", strings.TrimPrefix(te.Value, "number "), intRange(te.Type.String()))}
		}
		return &DecodeError{Member: te.Field, Reason: fmt.Sprintf("expected %s, got JSON %s", want, te.Value)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &DecodeError{Reason: fmt.Sprintf("invalid JSON at offset %d", se.Offset)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &DecodeError{Reason: "truncated JSON"}
	}
	return &DecodeError{Reason: err.Error()}
}

func decodeCBOR(body []byte, v any) error {
	if body[0]>>5 != 5 {
		return &DecodeError{Reason: "the body must be a CBOR map"}
	}
	rest, err := cborDec.UnmarshalFirst(body, v)
	if err != nil {
		var te *timeError
		if errors.As(err, &te) {
			return &DecodeError{Member: timeMember(CBOR, body, v), Reason: te.reason}
		}
		return cborError(err)
	}
	if len(rest) != 0 {
		return &DecodeError{Reason: "unexpected data after the CBOR map"}
	}
	return nil
}

// timeMember finds the top-level timestamp member of v (a pointer to an
// input struct) whose value in body does not decode, or "" when none does.
// GameLift's input timestamps are all top-level members.
func timeMember(p Protocol, body []byte, v any) string {
	rt := reflect.TypeOf(v)
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return ""
	}
	raw := map[string][]byte{}
	if p == JSON {
		var m map[string]json.RawMessage
		json.Unmarshal(body, &m)
		for k, r := range m {
			raw[k] = r
		}
	} else {
		var m map[string]cbor.RawMessage
		cborDec.Unmarshal(body, &m)
		for k, r := range m {
			raw[k] = r
		}
	}
	timeType := reflect.TypeOf(&Time{})
	for i := 0; i < rt.Elem().NumField(); i++ {
		f := rt.Elem().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		b, ok := raw[name]
		if f.Type != timeType || !ok {
			continue
		}
		var t Time
		var err error
		if p == JSON {
			err = t.UnmarshalJSON(b)
		} else {
			err = t.UnmarshalCBOR(b)
		}
		if err != nil {
			return name
		}
	}
	return ""
}

func cborError(err error) error {
	var te *cbor.UnmarshalTypeError
	if errors.As(err, &te) {
		member := cborMember(te.StructFieldName)
		if strings.Contains(te.Error(), "overflows") {
			return &DecodeError{Member: member, Reason: "integer is out of range for " + intRange(te.GoType)}
		}
		got := te.CBORType
		if got == "primitives" {
			got = "simple value or float"
		}
		return &DecodeError{Member: member, Reason: fmt.Sprintf("expected %s, got CBOR %s", goKind(te.GoType), got)}
	}
	var dup *cbor.DupMapKeyError
	if errors.As(err, &dup) {
		return &DecodeError{Reason: fmt.Sprintf("duplicate map key %v", dup.Key)}
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "cbor: ")
	return &DecodeError{Reason: msg}
}

// cborMember turns the decoder's "wire.CreateFleetInput.Name" into the
// member name "Name", and "wire.Tag.Key" into "Tag.Key".
func cborMember(field string) string {
	field = strings.TrimPrefix(field, "wire.")
	typ, member, ok := strings.Cut(field, ".")
	if !ok {
		return field
	}
	if strings.HasSuffix(typ, "Input") || strings.HasSuffix(typ, "Request") {
		return member
	}
	return field
}

func isIntegerText(s string) bool {
	if s == "" {
		return false
	}
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// intRange names the range of an integer member's Go type.
func intRange(goType string) string {
	if strings.TrimPrefix(goType, "*") == "int64" {
		return "a 64-bit integer"
	}
	return "a 32-bit integer (-2147483648 to 2147483647)"
}

// goKind names a Go type in the words of the model.
func goKind(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "int32" || t == "int64":
		return "an integer"
	case t == "float32" || t == "float64":
		return "a number"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]uint8"):
		return "a blob"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a map"
	case strings.HasPrefix(t, "wire."):
		return "a structure"
	}
	return t
}

// Encode writes the output shape v in protocol p. A nil v is an empty
// structure. An output whose lists are already encoded (encoded.go) is
// written by appending them.
func Encode(p Protocol, v any) ([]byte, error) {
	return AppendEncode(nil, p, v)
}

// AppendEncode is Encode appending to dst, for an output whose lists are
// already encoded; any other output is encoded into a new slice, dst
// unused.
func AppendEncode(dst []byte, p Protocol, v any) ([]byte, error) {
	if pe, ok := v.(preencoded); ok {
		return pe.appendTo(dst, p)
	}
	if p == CBOR {
		if v == nil {
			return []byte{0xa0}, nil
		}
		return cborEnc.Marshal(v)
	}
	if v == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(v)
}

// ErrorBody is the body of an error answer in either protocol. Both message
// keys are sent: botocore reads "message", the Go SDK's typed errors read
// "Message".
type ErrorBody struct {
	Type     string `json:"__type"`
	Message  string `json:"message"`
	MessageU string `json:"Message"`
}

// EncodeError writes an error body. code is the bare exception name.
// Invalid UTF-8 (say, from an operation name in a request path) becomes
// U+FFFD: a CBOR text string must be valid UTF-8 or clients reject it.
func EncodeError(p Protocol, code, message string) []byte {
	code = strings.ToValidUTF8(code, "\uFFFD")
	message = strings.ToValidUTF8(message, "\uFFFD")
	b := ErrorBody{Type: code, Message: message, MessageU: message}
	if p == CBOR {
		out, _ := cborEnc.Marshal(b)
		return out
	}
	out, _ := json.Marshal(b)
	return out
}
