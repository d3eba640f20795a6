package game

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// NewUUID returns a random (version 4) UUID in its canonical text form.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	return uuidText(b)
}

// NewOrderedUUID returns a version 7 UUID in its canonical text form: the
// current Unix time in milliseconds, then 74 random bits. Ids made later
// sort after earlier ones (to the millisecond), so a store's index of
// them grows at its end, one page for many new ids, instead of taking
// each new one at a random page: player sessions and game sessions are
// created at the highest rates. As hard to guess as a random UUID.
func NewOrderedUUID() string {
	var b [16]byte
	rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = b[6]&0x0f | 0x70
	return uuidText(b)
}

// uuidText sets b's variant and writes it in the canonical text form.
func uuidText(b [16]byte) string {
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// Identifier prefixes, as GameLift spells them.
const (
	FleetIDPrefix         = "fleet-"
	AliasIDPrefix         = "alias-"
	PlayerSessionIDPrefix = "psess-"
	GameSessionIDPrefix   = "gsess-"
)

func NewFleetID() string         { return FleetIDPrefix + NewUUID() }
func NewAliasID() string         { return AliasIDPrefix + NewUUID() }
func NewPlayerSessionID() string { return PlayerSessionIDPrefix + NewOrderedUUID() }
func NewGameSessionIDString() string {
	return GameSessionIDPrefix + NewOrderedUUID()
}

// NewSecret returns n random bytes as unpadded URL-safe base64: tokens that
// fit GameLift's AuthToken pattern [a-zA-Z0-9-]+ once '_' is avoided.
func NewSecret(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	s := base64.RawURLEncoding.EncodeToString(b)
	out := []byte(s)
	for i, c := range out {
		if c == '_' {
			out[i] = '-'
		}
	}
	return string(out)
}
