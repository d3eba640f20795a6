package sqldb

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/anylift/anylift/internal/game"
)

// The documents written by every queue placement, each by the committer,
// are encoded here by hand: a placement's (inserted by the start job,
// updated by the placer and by the activation) and its game session's
// (inserted by the placer, updated by the activation). encodePlacement
// and encodeSession write the bytes json.Marshal would, without its
// reflection and with one allocation: plain values are written here,
// anything else (a string to escape, a float or a time that json writes
// in another form) is handed to encoding/json, value by value. A field
// added to game.Placement or game.GameSession must be added here too:
// TestEncodeDocsAsJSON compares the two on random values, and fails
// until it is.

// encodePlacement is json.Marshal(p).
func encodePlacement(p *game.Placement) ([]byte, error) {
	e := newDocEncoder()
	b := &e.b
	*b = append(*b, `{"ID":`...)
	e.str(p.ID)
	*b = append(*b, `,"QueueName":`...)
	e.str(p.QueueName)
	*b = append(*b, `,"QueueARN":`...)
	e.str(p.QueueARN)
	*b = append(*b, `,"Status":`...)
	e.str(p.Status)
	*b = append(*b, `,"Properties":`...)
	e.properties(p.Properties)
	*b = append(*b, `,"MaxPlayers":`...)
	*b = strconv.AppendInt(*b, int64(p.MaxPlayers), 10)
	*b = append(*b, `,"GameSessionName":`...)
	e.str(p.GameSessionName)
	*b = append(*b, `,"GameSessionData":`...)
	e.str(p.GameSessionData)
	*b = append(*b, `,"MatchmakerData":`...)
	e.str(p.MatchmakerData)
	*b = append(*b, `,"Latencies":`...)
	if p.Latencies == nil {
		*b = append(*b, "null"...)
	} else {
		*b = append(*b, '[')
		for i, l := range p.Latencies {
			if i > 0 {
				*b = append(*b, ',')
			}
			*b = append(*b, `{"PlayerID":`...)
			e.str(l.PlayerID)
			*b = append(*b, `,"Location":`...)
			e.str(l.Location)
			*b = append(*b, `,"LatencyMs":`...)
			e.float(l.LatencyMs)
			*b = append(*b, '}')
		}
		*b = append(*b, ']')
	}
	*b = append(*b, `,"DesiredPlayers":`...)
	if p.DesiredPlayers == nil {
		*b = append(*b, "null"...)
	} else {
		*b = append(*b, '[')
		for i, d := range p.DesiredPlayers {
			if i > 0 {
				*b = append(*b, ',')
			}
			*b = append(*b, `{"PlayerID":`...)
			e.str(d.PlayerID)
			*b = append(*b, `,"PlayerData":`...)
			e.str(d.PlayerData)
			*b = append(*b, '}')
		}
		*b = append(*b, ']')
	}
	*b = append(*b, `,"Override":`...)
	if o := p.Override; o == nil {
		*b = append(*b, "null"...)
	} else {
		*b = append(*b, `{"LocationOrder":`...)
		if o.LocationOrder == nil {
			*b = append(*b, "null"...)
		} else {
			*b = append(*b, '[')
			for i, l := range o.LocationOrder {
				if i > 0 {
					*b = append(*b, ',')
				}
				e.str(l)
			}
			*b = append(*b, ']')
		}
		*b = append(*b, `,"Fallback":`...)
		e.str(o.Fallback)
		*b = append(*b, '}')
	}
	*b = append(*b, `,"StartTime":`...)
	e.time(p.StartTime)
	*b = append(*b, `,"EndTime":`...)
	e.time(p.EndTime)
	*b = append(*b, `,"Deadline":`...)
	e.time(p.Deadline)
	*b = append(*b, `,"GameSessionID":`...)
	e.str(p.GameSessionID)
	*b = append(*b, `,"GameSessionRegion":`...)
	e.str(p.GameSessionRegion)
	*b = append(*b, `,"FleetID":`...)
	e.str(p.FleetID)
	*b = append(*b, `,"IPAddress":`...)
	e.str(p.IPAddress)
	*b = append(*b, `,"DNSName":`...)
	e.str(p.DNSName)
	*b = append(*b, `,"Port":`...)
	*b = strconv.AppendInt(*b, int64(p.Port), 10)
	*b = append(*b, `,"PlacedPlayers":`...)
	if p.PlacedPlayers == nil {
		*b = append(*b, "null"...)
	} else {
		*b = append(*b, '[')
		for i, pp := range p.PlacedPlayers {
			if i > 0 {
				*b = append(*b, ',')
			}
			*b = append(*b, `{"PlayerID":`...)
			e.str(pp.PlayerID)
			*b = append(*b, `,"PlayerSessionID":`...)
			e.str(pp.PlayerSessionID)
			*b = append(*b, '}')
		}
		*b = append(*b, ']')
	}
	*b = append(*b, '}')
	return e.done()
}

// encodeSession is json.Marshal(s).
func encodeSession(s *game.GameSession) ([]byte, error) {
	e := newDocEncoder()
	b := &e.b
	*b = append(*b, `{"ID":`...)
	e.str(s.ID)
	*b = append(*b, `,"IDString":`...)
	e.str(s.IDString)
	*b = append(*b, `,"Name":`...)
	e.str(s.Name)
	*b = append(*b, `,"FleetID":`...)
	e.str(s.FleetID)
	*b = append(*b, `,"FleetARN":`...)
	e.str(s.FleetARN)
	*b = append(*b, `,"Location":`...)
	e.str(s.Location)
	*b = append(*b, `,"ComputeName":`...)
	e.str(s.ComputeName)
	*b = append(*b, `,"ProcessID":`...)
	e.str(s.ProcessID)
	*b = append(*b, `,"CreationTime":`...)
	e.time(s.CreationTime)
	*b = append(*b, `,"TerminationTime":`...)
	e.time(s.TerminationTime)
	*b = append(*b, `,"CurrentPlayerSessionCount":`...)
	*b = strconv.AppendInt(*b, int64(s.CurrentPlayerSessionCount), 10)
	*b = append(*b, `,"MaximumPlayerSessionCount":`...)
	*b = strconv.AppendInt(*b, int64(s.MaximumPlayerSessionCount), 10)
	*b = append(*b, `,"Status":`...)
	e.str(s.Status)
	*b = append(*b, `,"StatusReason":`...)
	e.str(s.StatusReason)
	*b = append(*b, `,"Properties":`...)
	e.properties(s.Properties)
	*b = append(*b, `,"IPAddress":`...)
	e.str(s.IPAddress)
	*b = append(*b, `,"DNSName":`...)
	e.str(s.DNSName)
	*b = append(*b, `,"Port":`...)
	*b = strconv.AppendInt(*b, int64(s.Port), 10)
	*b = append(*b, `,"PlayerSessionCreationPolicy":`...)
	e.str(s.PlayerSessionCreationPolicy)
	*b = append(*b, `,"ProtectionPolicy":`...)
	e.str(s.ProtectionPolicy)
	*b = append(*b, `,"CreatorID":`...)
	e.str(s.CreatorID)
	*b = append(*b, `,"GameSessionData":`...)
	e.str(s.GameSessionData)
	*b = append(*b, `,"MatchmakerData":`...)
	e.str(s.MatchmakerData)
	*b = append(*b, '}')
	return e.done()
}

// docEncoder appends JSON values to b as encoding/json writes them; err
// is the first value encoding/json refused. buf is its scratch buffer,
// from docBufs.
type docEncoder struct {
	b   []byte
	err error
	buf *[]byte
}

// docBufs holds the encoders' scratch buffers: a document is copied out
// at its length, as json.Marshal does.
var docBufs = sync.Pool{New: func() any { return new([]byte) }}

func newDocEncoder() docEncoder {
	buf := docBufs.Get().(*[]byte)
	return docEncoder{b: (*buf)[:0], buf: buf}
}

// done returns the document (or json.Marshal's error) and gives the
// scratch buffer back.
func (e *docEncoder) done() ([]byte, error) {
	*e.buf = e.b
	defer docBufs.Put(e.buf)
	if e.err != nil {
		return nil, e.err
	}
	return bytes.Clone(e.b), nil
}

// properties appends a []game.Property.
func (e *docEncoder) properties(ps []game.Property) {
	if ps == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, pr := range ps {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, `{"Key":`...)
		e.str(pr.Key)
		e.b = append(e.b, `,"Value":`...)
		e.str(pr.Value)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
}

// str appends s quoted. A string of printable ASCII that needs no escape
// (json escapes '"', '\\' and, for HTML, '<', '>' and '&') is copied as
// it is; any other goes to encoding/json.
func (e *docEncoder) str(s string) {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			e.json(s)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// float appends f as json writes a float64: without an exponent for 0 and
// for magnitudes in [1e-6, 1e21); others go to encoding/json.
func (e *docEncoder) float(f float64) {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) {
		e.json(f)
		return
	}
	e.b = strconv.AppendFloat(e.b, f, 'f', -1, 64)
}

// time appends t as its MarshalJSON does (RFC 3339 with nanoseconds) for
// a UTC time of years 0 to 9999; others go to encoding/json.
func (e *docEncoder) time(t time.Time) {
	if t.Location() != time.UTC || t.Year() < 0 || t.Year() > 9999 {
		e.json(t)
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

// plainJSON holds the bytes a JSON string holds as they are.
var plainJSON = func() (plain [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		plain[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return plain
}()

func (e *docEncoder) json(v any) {
	raw, err := json.Marshal(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.b = append(e.b, raw...)
}
