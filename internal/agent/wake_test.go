package agent

import (
	"testing"
	"time"
)

// TestNextWakeNeverSpins: deadlines already passed that wait on the
// service's backoff or on a token do not wake the loop before the backoff
// ends.
func TestNextWakeNeverSpins(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	retry := now.Add(8 * time.Second)
	for _, tc := range []struct {
		name string
		a    Agent
		want time.Time
	}{
		{"poll and token overdue, service backing off", Agent{nextPoll: now.Add(-time.Minute), refreshAt: now.Add(-time.Second), token: "t", svcRetryAt: retry}, retry},
		{"launch due without a token", Agent{nextPoll: now.Add(time.Hour), svcRetryAt: retry,
			slots: map[string]*slot{"a": {nextStart: now.Add(-time.Second)}}}, retry},
		{"killed process past its kill time", Agent{nextPoll: now.Add(time.Hour), token: "t", refreshAt: now.Add(time.Hour),
			slots: map[string]*slot{"a": {proc: &proc{stopping: "TERMINATED", killAt: now.Add(-time.Second), killed: true}}}}, now.Add(time.Hour)},
		{"launch due with a token", Agent{nextPoll: now.Add(time.Hour), token: "t", refreshAt: now.Add(time.Hour),
			slots: map[string]*slot{"a": {nextStart: now.Add(2 * time.Second)}}}, now.Add(2 * time.Second)},
	} {
		tc.a.cfg.PollInterval = 15 * time.Second
		if got := tc.a.nextWake(now); !got.Equal(tc.want) {
			t.Errorf("%s: next wake %v, want %v", tc.name, got.Sub(now), tc.want.Sub(now))
		}
	}
}

func TestChildEnvDropsCredentials(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "AWS_SECRET_ACCESS_KEY=s", "AWS_ACCESS_KEY_ID=a", "ANYLIFT_SECRET_KEY=x", "HOME=/root"})
	if len(got) != 2 || got[0] != "PATH=/bin" || got[1] != "HOME=/root" {
		t.Fatalf("childEnv = %q", got)
	}
}
