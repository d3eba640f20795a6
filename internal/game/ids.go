package game

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
)

// NewUUID returns a random (version 4) UUID in its canonical text form.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
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
func NewPlayerSessionID() string { return PlayerSessionIDPrefix + NewUUID() }
func NewGameSessionIDString() string {
	return GameSessionIDPrefix + NewUUID()
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
