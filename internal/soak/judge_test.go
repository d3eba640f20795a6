package soak

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// sample is one measurement during the run.
type sample struct {
	At time.Duration // since the load started
	gauges
	Calls    float64 // calls per second since the previous sample
	Expected int64   // failures provoked on purpose since the previous sample
	Failed   int64   // other failures since the previous sample
	Matches  float64 // matches completed per second since the previous sample
	Events   float64 // events read from the stream per second
	Load     float64 // the machine's load average over the last minute
}

const mib = 1 << 20

// metric is a figure judged (or only reported) for flatness.
type metric struct {
	name  string
	value func(gauges) float64
	// Growth allowed between the first and the last fifth of the samples
	// after warm-up: pct percent of the first fifth's mean, and at least
	// abs; a metric with neither is only reported.
	pct, abs float64
}

var metrics = []metric{
	{"RSS (MiB)", func(g gauges) float64 { return float64(g.RSS) / mib }, 20, 0},
	{"RSS anonymous (MiB)", func(g gauges) float64 { return float64(g.RSSAnon) / mib }, 0, 0},
	{"RSS file and shared (MiB)", func(g gauges) float64 { return float64(g.RSSFile) / mib }, 0, 0},
	{"Go runtime from the OS (MiB)", func(g gauges) float64 { return float64(g.GoSys) / mib }, 0, 0},
	{"heap in use (MiB)", func(g gauges) float64 { return float64(g.Heap) / mib }, 0, 0},
	{"goroutines", func(g gauges) float64 { return float64(g.Goroutines) }, 10, 20},
	{"open fds", func(g gauges) float64 { return float64(g.FDs) }, 10, 20},
	{"connected processes", func(g gauges) float64 { return float64(g.Procs) }, 0, 0},
	{"store (MiB)", func(g gauges) float64 { return float64(g.StoreBytes) / mib }, 0, 0},
}

// verdict is one metric's growth over the run.
type verdict struct {
	metric
	start, end float64 // means of the first and the last fifth after warm-up
	perHour    float64 // end − start, per hour between the two fifths' middles
	allowed    float64 // growth allowed; 0 when only reported
	ok         bool
}

func (v verdict) pctGrowth() float64 {
	if v.start == 0 {
		return 0
	}
	return 100 * (v.end - v.start) / v.start
}

// judge compares, for every metric, the mean of the first fifth of the
// samples taken after warmup with the mean of the last fifth. It needs at
// least two samples after warm-up.
func judge(samples []sample, warmup time.Duration) ([]verdict, error) {
	var after []sample
	for _, s := range samples {
		if s.At >= warmup {
			after = append(after, s)
		}
	}
	if len(after) < 2 {
		return nil, fmt.Errorf("%d samples after the %v warm-up; at least 2 are needed", len(after), warmup)
	}
	k := max(1, len(after)/5)
	first, last := after[:k], after[len(after)-k:]
	hours := (middle(last) - middle(first)).Hours()
	var out []verdict
	for _, m := range metrics {
		v := verdict{metric: m, start: mean(first, m.value), end: mean(last, m.value), ok: true}
		if hours > 0 {
			v.perHour = (v.end - v.start) / hours
		}
		if m.pct > 0 || m.abs > 0 {
			v.allowed = max(v.start*m.pct/100, m.abs)
			v.ok = v.end-v.start <= v.allowed
		}
		out = append(out, v)
	}
	return out, nil
}

func mean(ss []sample, f func(gauges) float64) float64 {
	var sum float64
	for _, s := range ss {
		sum += f(s.gauges)
	}
	return sum / float64(len(ss))
}

func middle(ss []sample) time.Duration { return (ss[0].At + ss[len(ss)-1].At) / 2 }

// idleCheck compares the server at rest before the load with the server
// at rest after it: goroutines and open files must come back, but for
// pooled store connections (poolFDs: the most a pool keeps open).
func idleCheck(before, after gauges, poolFDs int64) []string {
	var bad []string
	if d := after.Goroutines - before.Goroutines; d > 20 {
		bad = append(bad, fmt.Sprintf("%d goroutines more at rest after the load than before (%d → %d)", d, before.Goroutines, after.Goroutines))
	}
	if d := after.FDs - before.FDs; d > 20+poolFDs {
		bad = append(bad, fmt.Sprintf("%d open files more at rest after the load than before (%d → %d)", d, before.FDs, after.FDs))
	}
	return bad
}

// table formats every every-th sample (and the last) as a Markdown table.
func table(samples []sample, every int) string {
	var b strings.Builder
	b.WriteString("| time | RSS MiB (anon + file) | Go sys MiB | heap MiB | goroutines | open fds | processes | store MiB | calls/s | matches/s | events/s | failed on purpose | other failures | machine load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, s := range samples {
		if i%every != 0 && i != len(samples)-1 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f (%.1f + %.1f) | %.1f | %.1f | %d | %d | %d | %.1f | %.0f | %.1f | %.0f | %d | %d | %.1f |\n",
			clock(s.At), float64(s.RSS)/mib, float64(s.RSSAnon)/mib, float64(s.RSSFile)/mib, float64(s.GoSys)/mib,
			float64(s.Heap)/mib, s.Goroutines, s.FDs, s.Procs,
			float64(s.StoreBytes)/mib, s.Calls, s.Matches, s.Events, s.Expected, s.Failed, s.Load)
	}
	return b.String()
}

// verdictTable formats the verdicts as a Markdown table.
func verdictTable(vs []verdict) string {
	var b strings.Builder
	b.WriteString("| metric | first fifth | last fifth | growth | per hour | allowed | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, v := range vs {
		allowed, verdict := "reported", "—"
		if v.allowed > 0 {
			allowed, verdict = fmt.Sprintf("+%.1f", v.allowed), "flat"
			if !v.ok {
				verdict = "GROWS"
			}
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %+.1f %% | %+.1f | %s | %s |\n",
			v.name, v.start, v.end, v.pctGrowth(), v.perHour, allowed, verdict)
	}
	return b.String()
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func TestJudge(t *testing.T) {
	at := func(min int) time.Duration { return time.Duration(min) * time.Minute }
	run := func(f func(i int) gauges) []sample {
		var ss []sample
		for i := 0; i <= 30; i++ {
			ss = append(ss, sample{At: at(i), gauges: f(i)})
		}
		return ss
	}
	tests := []struct {
		name  string
		f     func(i int) gauges
		fails []string
	}{
		{"flat with noise", func(i int) gauges {
			return gauges{RSS: int64(100+5*math.Sin(float64(i))) * mib, Goroutines: int64(300 + i%7), FDs: 150 + int64(i%5)}
		}, nil},
		{"goroutines leak", func(i int) gauges {
			return gauges{RSS: 100 * mib, Goroutines: int64(300 + 5*i), FDs: 150}
		}, []string{"goroutines"}},
		{"warm-up growth is forgiven", func(i int) gauges {
			return gauges{RSS: int64(min(100, 40+20*i)) * mib, Goroutines: int64(min(300, 100*i)), FDs: 150}
		}, nil},
		{"RSS and fds grow", func(i int) gauges {
			return gauges{RSS: int64(100+3*i) * mib, Goroutines: 300, FDs: int64(150 + 2*i)}
		}, []string{"RSS (MiB)", "open fds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := judge(run(tt.f), 5*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var fails []string
			for _, v := range vs {
				if !v.ok {
					fails = append(fails, v.name)
				}
			}
			if strings.Join(fails, ",") != strings.Join(tt.fails, ",") {
				t.Errorf("failing metrics %v, want %v\n%s", fails, tt.fails, verdictTable(vs))
			}
		})
	}
	if _, err := judge(run(func(int) gauges { return gauges{} })[:3], 5*time.Minute); err == nil {
		t.Error("judged a run shorter than its warm-up")
	}
}
