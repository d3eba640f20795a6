package wire

import "testing"

// FuzzPatternMatchers holds every pattern checked without regexp to its
// regexp: both accept and refuse the same strings.
func FuzzPatternMatchers(f *testing.F) {
	for _, s := range []string{
		"", "fleet-", "fleet-1", "fleet-a1B2-c3", "containerfleet-x", "Fleet-1", "xfleet-", "fleetfleet-a",
		"fleet-a_b", "fleet-é", "fleet--", "-", "a-b", "a:b/c", "custom-bench", "\xff",
		"arn:aws:gamelift:us-west-2:123456789012:fleet/fleet-abc",
		"arn::fleet/fleet-a", "arn:fleet/fleet-a", "arn:a\nb:fleet/fleet-a", "arn:a:b:containerfleet/containerfleet-a",
		"arn:x:fleet/fleet-a:", "arn:x:fleet/fleet-a/b", "arn:x:Fleet/fleet-a", "arn:x:fleet/fleet-", "arn:x:/fleet-a",
		"fleet-a\n", "arn:x:fleet/fleet-a\n", "arn:gamelift:us-west-2::gamesession/fleet-1/gsess-1",
	} {
		f.Add(s)
	}
	n := 0
	for i := range patterns {
		if patterns[i].match != nil {
			n++
		}
	}
	if n == 0 {
		f.Fatal("no pattern has a matcher")
	}
	f.Fuzz(func(t *testing.T, v string) {
		for i := range patterns {
			p := &patterns[i]
			if p.match == nil {
				continue
			}
			if got, want := p.match(v), p.re.MatchString(v); got != want {
				t.Fatalf("pattern %s on %q: %v, regexp says %v", p.re, v, got, want)
			}
		}
	})
}
