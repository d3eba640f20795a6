package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// Time is a GameLift timestamp: epoch seconds with millisecond precision.
// In JSON it is a number (1767225600.5); in CBOR it is tag 1 wrapping a
// float64, the form the AWS SDK for Go v2 requires.
type Time struct{ time.Time }

// NewTime returns t as a wire timestamp, truncated to milliseconds.
func NewTime(t time.Time) *Time { return &Time{t.UTC().Truncate(time.Millisecond)} }

func (t Time) seconds() float64 { return float64(t.UnixMilli()) / 1000 }

// timeError is a timestamp that could not be decoded. The decoder does not
// know the member; Decode finds it (timeMember).
type timeError struct{ reason string }

func (e *timeError) Error() string { return e.reason }

func badTime(format string, args ...any) error { return &timeError{fmt.Sprintf(format, args...)} }

// MarshalJSON writes epoch seconds as a JSON number.
func (t Time) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, t.seconds(), 'f', -1, 64), nil
}

// UnmarshalJSON accepts a number of epoch seconds, integral or fractional,
// as botocore sends, and also a numeric string.
func (t *Time) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return badTime("timestamp must be a number of epoch seconds")
		}
		b = []byte(s)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return badTime("timestamp must be a number of epoch seconds")
	}
	return t.setSeconds(f)
}

func (t *Time) setSeconds(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < -62135596800 || f > 253402300799 {
		return badTime("timestamp %v is out of range", f)
	}
	sec, frac := math.Modf(f)
	t.Time = time.Unix(int64(sec), int64(math.Round(frac*1000))*int64(time.Millisecond)).UTC()
	return nil
}

// MarshalCBOR writes tag 1 wrapping a float64 of epoch seconds.
func (t Time) MarshalCBOR() ([]byte, error) {
	b := make([]byte, 10)
	b[0] = 0xc1
	b[1] = 0xfb
	bits := math.Float64bits(t.seconds())
	for i := 0; i < 8; i++ {
		b[2+i] = byte(bits >> (56 - 8*i))
	}
	return b, nil
}

// UnmarshalCBOR accepts tag 1 wrapping an integer or a float of any width.
func (t *Time) UnmarshalCBOR(b []byte) error {
	var tag cbor.RawTag
	if err := cbor.Unmarshal(b, &tag); err != nil {
		return badTime("timestamp must be CBOR tag 1 wrapping epoch seconds")
	}
	if tag.Number != 1 {
		return badTime("timestamp must be CBOR tag 1, not tag %d", tag.Number)
	}
	var v any
	if err := cbor.Unmarshal(tag.Content, &v); err != nil {
		return badTime("timestamp must be CBOR tag 1 wrapping a number")
	}
	switch n := v.(type) {
	case uint64:
		if n > math.MaxInt64 {
			return badTime("timestamp is out of range")
		}
		return t.setSeconds(float64(n))
	case int64:
		return t.setSeconds(float64(n))
	case float64:
		return t.setSeconds(n)
	case float32:
		return t.setSeconds(float64(n))
	}
	return badTime("timestamp must be CBOR tag 1 wrapping a number")
}
