package console

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/metrics"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// queueView is a queue with its current metrics (from the snapshot).
type queueView struct {
	Queue   *game.Queue
	Metrics map[string]float64
}

// metricsByQueue reads the queue gauges of the current snapshot: queue
// name → metric name (without the prefix) → value.
func (c *Console) metricsByQueue() (map[string]map[string]float64, time.Time) {
	out := map[string]map[string]float64{}
	if c.cfg.Snapshots == nil {
		return out, time.Time{}
	}
	snap := c.cfg.Snapshots.Current()
	for _, s := range snap.Samples {
		if len(s.LabelNames) != 1 || s.LabelNames[0] != "queue" {
			continue
		}
		q := s.LabelValues[0]
		if out[q] == nil {
			out[q] = map[string]float64{}
		}
		out[q][s.Name[len(metrics.Prefix):]] = s.Value
	}
	return out, snap.Taken
}

func (c *Console) queues(w http.ResponseWriter, r *http.Request) {
	byQueue, taken := c.metricsByQueue()
	var list []queueView
	err := c.read(r, func(tx store.Tx) error {
		token := ""
		for len(list) < maxListed {
			qs, next, err := tx.ListQueues(store.Page{Limit: 100, Token: token})
			if err != nil {
				return err
			}
			for _, q := range qs {
				list = append(list, queueView{Queue: q, Metrics: byQueue[q.Name]})
			}
			if next == "" {
				return nil
			}
			token = next
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, "", err)
		return
	}
	c.render(w, r, http.StatusOK, "queues", "Queues", struct {
		Queues []queueView
		Taken  time.Time
	}{list, taken})
}

// placementsShown is how many of the newest placements a page lists.
const placementsShown = 200

func (c *Console) queue(w http.ResponseWriter, r *http.Request) {
	byQueue, taken := c.metricsByQueue()
	var q *game.Queue
	var recent []*game.Placement
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if q, err = tx.GetQueue(r.PathValue("name")); err != nil {
			return err
		}
		recent, _, err = tx.ListPlacements(store.PlacementFilter{Queue: q.Name}, store.Page{Limit: 50})
		return err
	})
	if err != nil {
		c.readFailed(w, r, "Queue "+r.PathValue("name"), err)
		return
	}
	c.render(w, r, http.StatusOK, "queue", "Queue "+q.Name, struct {
		queueView
		Taken      time.Time
		Placements []*game.Placement
		Names      []string
		Ranges     []rangeChoice
	}{queueView{q, byQueue[q.Name]}, taken, recent, game.QueueMetricNames, ranges})
}

// queueMetrics answers one metric of a queue over a range, as
// fleetMetrics does, with one series named after the queue.
func (c *Console) queueMetrics(w http.ResponseWriter, r *http.Request) {
	cq, ok := c.chartRequest(w, r, game.QueueMetricNames)
	if !ok {
		return
	}
	var q *game.Queue
	var rows []game.MetricMinute
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if q, err = tx.GetQueue(r.PathValue("name")); err != nil {
			return err
		}
		rows, err = tx.MetricMinutes(metrics.QueueResource(q.Name), "", cq.from, cq.now, 14*1440+1)
		return err
	})
	if c.chartFailed(w, err, "queue not found") {
		return
	}
	byQueue, taken := c.metricsByQueue()
	v, ok := byQueue[q.Name][cq.metric]
	points := withCurrent(downsample(rows, "", cq.metric, cq.bucket()), v, ok, taken)
	writeChart(w, cq, []chartSeries{{Location: q.Name, Points: points}})
}

// placementStatuses are the choices of the status filter.
var placementStatuses = []string{game.PlacementPending, game.PlacementFulfilled, game.PlacementCancelled,
	game.PlacementTimedOut, game.PlacementFailed}

func (c *Console) placements(w http.ResponseWriter, r *http.Request) {
	f := store.PlacementFilter{Queue: r.URL.Query().Get("queue"), Status: r.URL.Query().Get("status")}
	if f.Status != "" && !slices.Contains(placementStatuses, f.Status) {
		c.fail(w, r, http.StatusBadRequest, "Unknown placement status.")
		return
	}
	var list []*game.Placement
	err := c.read(r, func(tx store.Tx) error {
		var err error
		list, _, err = tx.ListPlacements(f, store.Page{Limit: placementsShown})
		return err
	})
	if err != nil {
		c.readFailed(w, r, "", err)
		return
	}
	c.render(w, r, http.StatusOK, "placements", "Placements", struct {
		Filter     store.PlacementFilter
		Statuses   []string
		Placements []*game.Placement
	}{f, placementStatuses, list})
}

func (c *Console) placement(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	var p *game.Placement
	err := c.read(r, func(tx store.Tx) error {
		if id == "" {
			return game.Errorf(game.NotFound, "no id")
		}
		var err error
		p, err = tx.GetPlacement(id)
		return err
	})
	if err != nil {
		c.readFailed(w, r, "Placement "+id, err)
		return
	}
	c.render(w, r, http.StatusOK, "placement", "Placement "+p.ID, p)
}

// stopPlacement is StopGameSessionPlacement from the placement page.
func (c *Console) stopPlacement(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	_, err := c.cfg.Queues.StopGameSessionPlacement(r.Context(), &wire.StopGameSessionPlacementInput{PlacementId: &id})
	if err != nil {
		c.actionFailed(w, r, "Placement "+id, err)
		return
	}
	http.Redirect(w, r, "/console/placement?id="+url.QueryEscape(id), http.StatusSeeOther)
}
