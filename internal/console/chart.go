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

// fleetMetrics answers one metric of a fleet over a range (seconds, one
// minute to two weeks) from the per-minute history, followed by the
// current measurement.
func (c *Console) fleetMetrics(w http.ResponseWriter, r *http.Request) {
	metric := r.URL.Query().Get("metric")
	if !slices.Contains(game.FleetMetricNames, metric) {
		http.Error(w, "unknown metric", http.StatusBadRequest)
		return
	}
	secs, err := strconv.Atoi(r.URL.Query().Get("range"))
	if err != nil {
		secs = 3600
	}
	secs = min(max(secs, 60), 14*86400)
	now := c.now()
	from := now.Add(-time.Duration(secs) * time.Second).Truncate(time.Minute)
	var f *game.Fleet
	var rows []game.MetricMinute
	err = c.read(r, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(r.PathValue("id")); err != nil {
			return err
		}
		rows, err = tx.MetricMinutes(f.ID, "", from, now, 14*1440*len(f.Locations)+1)
		return err
	})
	if game.IsKind(err, game.NotFound) {
		http.Error(w, "fleet not found", http.StatusNotFound)
		return
	}
	if err != nil {
		c.cfg.Log.Error("console chart", "err", err)
		http.Error(w, "store unavailable", http.StatusInternalServerError)
		return
	}
	out := chartData{Metric: metric, From: from.UnixMilli(), To: now.UnixMilli()}
	byFleet, taken := c.metricsByFleet()
	current := map[string]float64{}
	for _, m := range byFleet[f.ID] {
		current[m.Location] = m.Values()[metric]
	}
	bucket := max(1, (secs/60+maxPoints-1)/maxPoints)
	for _, loc := range f.Locations {
		s := chartSeries{Location: loc, Points: [][2]float64{}}
		s.Points = downsample(rows, loc, metric, bucket)
		if v, ok := current[loc]; ok && !taken.IsZero() {
			s.Points = append(s.Points, [2]float64{float64(taken.UnixMilli()), v})
		}
		out.Series = append(out.Series, s)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(out)
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
