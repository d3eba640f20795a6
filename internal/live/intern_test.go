package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Sessions that come and go, each on a process of its own and created by
// a player of its own, leave nothing of theirs in the interner: it keeps
// the strings sessions share, not one entry per process or player.
func TestInternerKeepsOnlySharedStrings(t *testing.T) {
	l := New()
	const fleet = "fleet-1"
	l.Apply([]store.Change{{Kind: store.FleetPut, ID: fleet}})
	for i := range 1000 {
		s := &game.GameSession{ID: fmt.Sprintf("gsess-%d", i), FleetID: fleet, FleetARN: "arn:" + fleet, Location: "custom-a",
			ComputeName: fmt.Sprintf("host-%d", i%4), ProcessID: fmt.Sprintf("process-%d", i), CreatorID: fmt.Sprintf("player-%d", i),
			IPAddress: "10.0.0.1", Status: game.SessionActive, PlayerSessionCreationPolicy: game.AcceptAll,
			ProtectionPolicy: game.NoProtection, MaximumPlayerSessionCount: 4, CreationTime: time.Unix(int64(i), 0)}
		ended := *s
		ended.Status = game.SessionTerminated
		l.Apply([]store.Change{{Kind: store.SessionPut, ID: s.ID, PK: int64(i + 1), Session: s}})
		l.Apply([]store.Change{{Kind: store.SessionPut, ID: s.ID, PK: int64(i + 1), Session: &ended}})
	}
	if l.Len() != 0 {
		t.Fatalf("%d sessions live after every one ended", l.Len())
	}
	if n := len(l.strs.m); n > 20 {
		t.Errorf("the interner holds %d strings after 1,000 sessions on 1,000 processes came and went; want the shared ones only", n)
	}
}
