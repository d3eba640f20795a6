package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Encoded is one value of shape T already encoded in one protocol: the
// bytes Encode writes for that value. It is built once, by EncodeValue,
// and written as many times as wanted inside an EncodedList, so that an
// answer repeating a value (a live game session in many pages) does not
// encode it again. Its bytes are never changed once built; it may be
// shared between goroutines.
type Encoded[T any] struct {
	p Protocol
	b []byte
}

// EncodeValue encodes v in protocol p, as Encode would.
func EncodeValue[T any](p Protocol, v *T) (Encoded[T], error) {
	b, err := Encode(p, v)
	if err != nil {
		return Encoded[T]{}, err
	}
	return Encoded[T]{p: p, b: b}, nil
}

// Protocol is the protocol the value is encoded in.
func (e Encoded[T]) Protocol() Protocol { return e.p }

// Bytes returns the encoding, which the caller must not change.
func (e Encoded[T]) Bytes() []byte { return e.b }

// IsZero reports whether e holds no encoding (the zero Encoded).
func (e Encoded[T]) IsZero() bool { return e.b == nil }

// EncodedList is a list of shape T whose items are already encoded, all
// in the protocol of the answer that holds it. As a member of an output
// shape it is written as the list of those items, exactly as a []T of
// the same values: Encode writes the output shapes of this file without
// looking into the items, and any other encoder (encoding/json, the CBOR
// codec) through MarshalJSON and MarshalCBOR, which check the items
// first. A nil list is an absent member, an empty one an empty list, as
// for a []T member with omitzero.
type EncodedList[T any] []Encoded[T]

// errProtocol is an item encoded in another protocol than its answer's.
var errProtocol = errors.New("wire: an encoded item is not in the answer's protocol")

// appendTo appends the list in protocol p.
func (l EncodedList[T]) appendTo(dst []byte, p Protocol) ([]byte, error) {
	if p == CBOR {
		dst = appendCBORHead(dst, cborArray, uint64(len(l)))
	} else {
		dst = append(dst, '[')
	}
	for i, e := range l {
		if e.p != p || e.b == nil {
			return nil, errProtocol
		}
		if p == JSON && i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e.b...)
	}
	if p == JSON {
		dst = append(dst, ']')
	}
	return dst, nil
}

// size is the bytes of the items, with room for separators.
func (l EncodedList[T]) size() int {
	n := 0
	for _, e := range l {
		n += len(e.b) + 1
	}
	return n
}

// MarshalJSON writes the list as a JSON array of its items.
func (l EncodedList[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	return l.appendTo(nil, JSON)
}

// MarshalCBOR writes the list as a CBOR array of its items.
func (l EncodedList[T]) MarshalCBOR() ([]byte, error) {
	if l == nil {
		return []byte{0xf6}, nil
	}
	return l.appendTo(nil, CBOR)
}

// SearchGameSessionsEncoded is SearchGameSessionsOutput with its game
// sessions already encoded. Encode writes for it the very bytes it writes
// for the SearchGameSessionsOutput of the same sessions and NextToken.
type SearchGameSessionsEncoded struct {
	GameSessions EncodedList[GameSession] `json:"GameSessions,omitzero"`
	NextToken    *string                  `json:"NextToken,omitzero"`
}

// DescribeGameSessionsEncoded is DescribeGameSessionsOutput with its game
// sessions already encoded, as SearchGameSessionsEncoded is for search.
type DescribeGameSessionsEncoded struct {
	GameSessions EncodedList[GameSession] `json:"GameSessions,omitzero"`
	NextToken    *string                  `json:"NextToken,omitzero"`
}

// preencoded is an output shape whose lists are already encoded: Encode
// writes it by appending rather than through the codecs.
type preencoded interface {
	appendTo(dst []byte, p Protocol) ([]byte, error)
}

func (o *SearchGameSessionsEncoded) appendTo(dst []byte, p Protocol) ([]byte, error) {
	return appendPage(dst, p, "GameSessions", o.GameSessions, o.NextToken)
}

func (o *DescribeGameSessionsEncoded) appendTo(dst []byte, p Protocol) ([]byte, error) {
	return appendPage(dst, p, "GameSessions", o.GameSessions, o.NextToken)
}

// appendPage appends a page of a list operation: a structure of two
// members, the list (named name; absent when nil) and NextToken (absent
// when nil), in that order, as the codecs write such a shape.
func appendPage[T any](dst []byte, p Protocol, name string, list EncodedList[T], next *string) ([]byte, error) {
	n, size := 0, list.size()+len(name)+32
	if list != nil {
		n++
	}
	if next != nil {
		n++
		size += len(*next) + 16
	}
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	if p == CBOR {
		dst = appendCBORHead(dst, cborMap, uint64(n))
	} else {
		dst = append(dst, '{')
	}
	var err error
	if list != nil {
		dst = appendKey(dst, p, name, false)
		if dst, err = list.appendTo(dst, p); err != nil {
			return nil, err
		}
	}
	if next != nil {
		dst = appendKey(dst, p, "NextToken", list != nil)
		if dst, err = appendString(dst, p, *next); err != nil {
			return nil, err
		}
	}
	if p == JSON {
		dst = append(dst, '}')
	}
	return dst, nil
}

// appendKey appends a structure member's name (a plain ASCII name of the
// model), preceded in JSON by a comma when it is not the first.
func appendKey(dst []byte, p Protocol, name string, comma bool) []byte {
	if p == CBOR {
		return append(appendCBORHead(dst, cborText, uint64(len(name))), name...)
	}
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendString appends a string value as the codecs write it.
func appendString(dst []byte, p Protocol, s string) ([]byte, error) {
	if p == CBOR {
		return append(appendCBORHead(dst, cborText, uint64(len(s))), s...), nil
	}
	if plainJSON(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("wire: encoding a string: %w", err)
	}
	return append(dst, b...), nil
}

// plainJSON reports whether encoding/json writes s between quotes as it
// is: printable ASCII, none of the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// CBOR major types written here.
const (
	cborText  = 3 << 5
	cborArray = 4 << 5
	cborMap   = 5 << 5
)

// appendCBORHead appends the head of a data item of major type major
// and argument n, in its shortest form (as the CBOR codec writes it).
func appendCBORHead(dst []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(dst, major|byte(n))
	case n <= 0xff:
		return append(dst, major|24, byte(n))
	case n <= 0xffff:
		return append(dst, major|25, byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return append(dst, major|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, major|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}
