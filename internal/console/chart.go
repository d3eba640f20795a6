package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// chartData is what the graph script draws: one series per location,
// points as [epoch ms, value], oldest first.
type chartData struct {
	Metric string        `json:"metric"`
	From   int64         `json:"from"`
	To     int64         `json:"to"`
	Series []chartSeries `json:"series"`
}

type chartSeries struct {
	Location string       `json:"location"`
	Points   [][2]float64 `json:"points"`
}

// maxPoints is the most points a series has; longer ranges are averaged
// into buckets of several minutes.
const maxPoints = 720

// chartRequest is what a metrics.json request asks for: one metric over
// the range parameter in seconds (default one hour, clamped to one minute
// .. two weeks), from the whole minute from to now.
type chartRequest struct {
	metric    string
	secs      int
	from, now time.Time
}

// chartRequest reads a chart's metric and range. A metric not in names is
// answered 400, and ok is false.
func (c *Console) chartRequest(w http.ResponseWriter, r *http.Request, names []string) (q chartRequest, ok bool) {
	q.metric = r.URL.Query().Get("metric")
	if !slices.Contains(names, q.metric) {
		http.Error(w, "unknown metric", http.StatusBadRequest)
		return q, false
	}
	secs, err := strconv.Atoi(r.URL.Query().Get("range"))
	if err != nil {
		secs = 3600
	}
	q.secs = min(max(secs, 60), 14*86400)
	q.now = c.now()
	q.from = q.now.Add(-time.Duration(q.secs) * time.Second).Truncate(time.Minute)
	return q, true
}

// bucket is how many minutes one point averages, so that a series has at
// most maxPoints.
func (q chartRequest) bucket() int { return max(1, (q.secs/60+maxPoints-1)/maxPoints) }

// chartFailed answers a chart whose read failed with err: 404 with
// notFound for a NotFound kind, else 500 with the error logged. It
// reports whether it answered (err is not nil).
func (c *Console) chartFailed(w http.ResponseWriter, err error, notFound string) bool {
	switch {
	case err == nil:
		return false
	case game.IsKind(err, game.NotFound):
		http.Error(w, notFound, http.StatusNotFound)
	default:
		c.cfg.Log.Error("console chart", "err", err)
		http.Error(w, "store unavailable", http.StatusInternalServerError)
	}
	return true
}

// writeChart answers q's series as JSON, not to be cached.
func writeChart(w http.ResponseWriter, q chartRequest, series []chartSeries) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(chartData{Metric: q.metric, From: q.from.UnixMilli(), To: q.now.UnixMilli(), Series: series})
}

// withCurrent appends the current measurement v, taken at taken, to
// points when there is one (ok, in a snapshot that was taken).
func withCurrent(points [][2]float64, v float64, ok bool, taken time.Time) [][2]float64 {
	if !ok || taken.IsZero() {
		return points
	}
	return append(points, [2]float64{float64(taken.UnixMilli()), v})
}

// fleetMetrics answers one metric of a fleet over a range from the
// per-minute history, one series per location, each followed by the
// current measurement.
func (c *Console) fleetMetrics(w http.ResponseWriter, r *http.Request) {
	q, ok := c.chartRequest(w, r, game.FleetMetricNames)
	if !ok {
		return
	}
	var f *game.Fleet
	var rows []game.MetricMinute
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(r.PathValue("id")); err != nil {
			return err
		}
		rows, err = tx.MetricMinutes(f.ID, "", q.from, q.now, 14*1440*len(f.Locations)+1)
		return err
	})
	if c.chartFailed(w, err, "fleet not found") {
		return
	}
	byFleet, taken := c.metricsByFleet()
	current := map[string]float64{}
	for _, m := range byFleet[f.ID] {
		current[m.Location] = m.Values()[q.metric]
	}
	var series []chartSeries
	for _, loc := range f.Locations {
		v, ok := current[loc]
		points := withCurrent(downsample(rows, loc, q.metric, q.bucket()), v, ok, taken)
		series = append(series, chartSeries{Location: loc, Points: points})
	}
	writeChart(w, q, series)
}

// downsample averages loc's minutes of metric in buckets of n minutes.
func downsample(rows []game.MetricMinute, loc, metric string, n int) [][2]float64 {
	out := [][2]float64{}
	var start int64
	var sum float64
	count := 0
	flush := func() {
		if count > 0 {
			out = append(out, [2]float64{float64(start), sum / float64(count)})
		}
	}
	for _, m := range rows {
		if m.Location != loc {
			continue
		}
		ms := m.Minute.UnixMilli()
		b := ms - ms%(int64(n)*60000)
		if count > 0 && b != start {
			flush()
			sum, count = 0, 0
		}
		start = b
		sum += m.Values[metric]
		count++
	}
	flush()
	return out
}
