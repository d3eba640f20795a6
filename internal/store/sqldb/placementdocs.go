package sqldb

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/anylift/anylift/internal/game"
)

// Placements decoded once (decoded.go). A queue placement's record is read back at
// each of its steps (the placer's pending list, the placement under its
// lock, the activation's placement of its session) and was decoded from
// its JSON document every time: a tenth of an owning node's CPU. The
// store keeps the placements it last wrote or decoded, each beside the
// document it was decoded from (or written as), and a read whose
// document is that same text takes a copy of the placement kept instead
// of decoding it.
//
// The document read is what decides: the row is still read, locked as
// before, in the same statement, so whoever wrote it (this node, another
// node, a job that failed), what a reader gets is exactly what decoding
// that document would give. A document that differs is decoded and kept
// in its place. Nothing here is a decision's authority; it saves the
// decoding only.

// maxPlacementDocs bounds the placements kept decoded: past it, they start
// again empty. A placement in flight is read a few times within a second
// of being written, so a few thousand cover every placement in flight at
// the rates one node reaches.
const maxPlacementDocs = 8192

// decodePlacement decodes the placement doc holds.
func (db *DB) decodePlacement(doc string) (*game.Placement, error) {
	var p game.Placement
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// readPlacement is decodePlacement through the placements kept.
func (t *Tx) readPlacement(doc string) (*game.Placement, error) {
	k := &t.db.placementDocs
	if id, ok := placementDocID(doc); ok {
		if p := k.get(id, doc); p != nil {
			return p, nil
		}
		p, err := t.db.decodePlacement(doc)
		if err != nil {
			return nil, err
		}
		if p.Ended() {
			k.drop(id) // read no more on the hot path
		} else {
			k.put(id, doc, p)
		}
		return p, nil
	}
	return t.db.decodePlacement(doc)
}

// wrotePlacement keeps p as written in doc, as decoding doc would give it
// (asStored), when that is certain: JSON replaces invalid UTF-8 in a
// string, so a placement holding some is left to be decoded.
func (t *Tx) wrotePlacement(p *game.Placement, doc []byte) {
	s, ok := storedPlacement(p)
	k := &t.db.placementDocs
	if !ok || s.Ended() {
		k.drop(p.ID)
		return
	}
	k.keep(p.ID, string(doc), s)
}

// placementDocID is the id of the placement doc holds, read from the
// document's start, where encoding/json writes the struct's first field:
// {"ID":"…",. ok is false for any other shape (or an id holding a
// character JSON escapes), which is then decoded and not kept.
func placementDocID(doc string) (string, bool) {
	const prefix = `{"ID":"`
	if len(doc) < len(prefix) || doc[:len(prefix)] != prefix {
		return "", false
	}
	for i := len(prefix); i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			return doc[len(prefix):i], true
		case c == '\\' || c < 0x20 || c >= 0x80 || c == '<' || c == '>' || c == '&':
			return "", false
		}
	}
	return "", false
}

// storedPlacement is p as decoding its JSON document gives it: a deep
// copy, its times without monotonic clock reading and in the zone
// decoding gives. ok is false when some string of p holds invalid UTF-8
// (which encoding replaces).
func storedPlacement(p *game.Placement) (*game.Placement, bool) {
	c := clonePlacement(p)
	c.StartTime, c.EndTime, c.Deadline = asStored(c.StartTime), asStored(c.EndTime), asStored(c.Deadline)
	valid := true
	str := func(ss ...string) {
		for _, s := range ss {
			if !utf8.ValidString(s) {
				valid = false
			}
		}
	}
	str(c.ID, c.QueueName, c.QueueARN, c.Status, c.GameSessionName, c.GameSessionData, c.MatchmakerData,
		c.GameSessionID, c.GameSessionRegion, c.FleetID, c.IPAddress, c.DNSName)
	for _, pr := range c.Properties {
		str(pr.Key, pr.Value)
	}
	for _, l := range c.Latencies {
		str(l.PlayerID, l.Location)
	}
	for _, d := range c.DesiredPlayers {
		str(d.PlayerID, d.PlayerData)
	}
	for _, pp := range c.PlacedPlayers {
		str(pp.PlayerID, pp.PlayerSessionID)
	}
	if o := c.Override; o != nil {
		str(o.Fallback)
		str(o.LocationOrder...)
	}
	return c, valid
}

// clonePlacement is a deep copy of p (nil slices stay nil, empty ones
// empty).
func clonePlacement(p *game.Placement) *game.Placement {
	c := *p
	c.Properties = slices.Clone(p.Properties)
	c.Latencies = slices.Clone(p.Latencies)
	c.DesiredPlayers = slices.Clone(p.DesiredPlayers)
	c.PlacedPlayers = slices.Clone(p.PlacedPlayers)
	if p.Override != nil {
		o := *p.Override
		o.LocationOrder = slices.Clone(p.Override.LocationOrder)
		c.Override = &o
	}
	return &c
}

// cloneQueue is a deep copy of q.
func cloneQueue(q *game.Queue) *game.Queue {
	c := *q
	c.LatencyPolicies = slices.Clone(q.LatencyPolicies)
	c.Destinations = slices.Clone(q.Destinations)
	c.AllowedLocations = slices.Clone(q.AllowedLocations)
	c.PriorityOrder = slices.Clone(q.PriorityOrder)
	c.LocationOrder = slices.Clone(q.LocationOrder)
	return &c
}
