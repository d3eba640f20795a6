package sdkserver

import (
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// HandshakeError is a handshake whose members break their bounds. It is
// refused with 400 before authentication; its message names the member,
// never its value (the token is one).
type HandshakeError struct {
	Member, Rule string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("invalid handshake: %s must be %s", e.Member, e.Rule)
}

// The bounds of the handshake's members: the API model's where it has the
// member (FleetId, ComputeName, AuthToken, ServerSdkVersion,
// IdempotencyToken), generous ones otherwise. The SDKs all stay within.
var (
	fleetIDPattern     = regexp.MustCompile(`^(?:[a-z]*fleet-[a-zA-Z0-9\-]+|arn:.*:[a-z]*fleet/[a-z]*fleet-[a-zA-Z0-9\-]+)$`)
	computeNamePattern = regexp.MustCompile(`^(?:[a-zA-Z0-9\-]+(/[a-zA-Z0-9\-]+)?|arn:.*:compute/[a-zA-Z0-9\-]+(/[a-zA-Z0-9\-]+)?)$`)
	sdkVersionPattern  = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	sdkLanguagePattern = regexp.MustCompile(`^[A-Za-z0-9+#._\-]*$`)
	idempotencyPattern = regexp.MustCompile(`^[a-zA-Z0-9\-]*$`)
)

// MaxPIDLength bounds a process id (pID), in characters.
const MaxPIDLength = 1024

// checkHandshake applies the bounds to h's members.
func checkHandshake(h *Handshake) *HandshakeError {
	runes := utf8.RuneCountInString
	switch {
	case runes(h.PID) > MaxPIDLength || !printable(h.PID):
		return &HandshakeError{"pID", fmt.Sprintf("at most %d characters, none of them control characters", MaxPIDLength)}
	case len(h.FleetID) > 512 || !fleetIDPattern.MatchString(h.FleetID):
		return &HandshakeError{"FleetId", "a fleet id or ARN of at most 512 characters"}
	case len(h.ComputeID) > 1024 || !computeNamePattern.MatchString(h.ComputeID):
		return &HandshakeError{"ComputeId", "a compute name or ARN of at most 1024 characters"}
	case len(h.AuthToken) > 64 || !printable(h.AuthToken) || hasSpace(h.AuthToken):
		return &HandshakeError{"Authorization", "at most 64 characters without spaces"}
	case len(h.SDKVersion) > 128 || h.SDKVersion != "" && !sdkVersionPattern.MatchString(h.SDKVersion):
		return &HandshakeError{"sdkVersion", "a version such as 5.6.0"}
	case len(h.SDKLanguage) > 32 || !sdkLanguagePattern.MatchString(h.SDKLanguage):
		return &HandshakeError{"sdkLanguage", "at most 32 letters, digits or +#._-"}
	case len(h.IdempotencyToken) > 48 || !idempotencyPattern.MatchString(h.IdempotencyToken):
		return &HandshakeError{"IdempotencyToken", "at most 48 letters, digits or hyphens"}
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func hasSpace(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) {
			return true
		}
	}
	return false
}
