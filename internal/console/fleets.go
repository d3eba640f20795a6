package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// fleetView is a fleet with its current metrics (from the snapshot).
type fleetView struct {
	Fleet     *game.Fleet
	Total     game.FleetMetrics
	Locations []game.FleetMetrics
}

// metricsByFleet groups the current snapshot by fleet.
func (c *Console) metricsByFleet() (map[string][]game.FleetMetrics, time.Time) {
	out := map[string][]game.FleetMetrics{}
	if c.cfg.Snapshots == nil {
		return out, time.Time{}
	}
	snap := c.cfg.Snapshots.Current()
	for _, m := range snap.Fleets {
		out[m.FleetID] = append(out[m.FleetID], m)
	}
	return out, snap.Taken
}

func total(ms []game.FleetMetrics) game.FleetMetrics {
	var t game.FleetMetrics
	for _, m := range ms {
		t.ActiveInstances += m.ActiveInstances
		t.IdleInstances += m.IdleInstances
		t.ActiveServerProcesses += m.ActiveServerProcesses
		t.HealthyServerProcesses += m.HealthyServerProcesses
		t.ActivatingGameSessions += m.ActivatingGameSessions
		t.ActiveGameSessions += m.ActiveGameSessions
		t.AvailableGameSessions += m.AvailableGameSessions
		t.ConcurrentActivatableGameSessions += m.ConcurrentActivatableGameSessions
		t.CurrentPlayerSessions += m.CurrentPlayerSessions
	}
	return t
}

// maxListed bounds the rows a list page reads.
const maxListed = 1000

func (c *Console) fleets(w http.ResponseWriter, r *http.Request) {
	byFleet, taken := c.metricsByFleet()
	var list []fleetView
	err := c.read(r, func(tx store.Tx) error {
		token := ""
		for len(list) < maxListed {
			fleets, next, err := tx.ListFleets(store.Page{Limit: 100, Token: token})
			if err != nil {
				return err
			}
			for _, f := range fleets {
				list = append(list, fleetView{Fleet: f, Total: total(byFleet[f.ID]), Locations: byFleet[f.ID]})
			}
			if next == "" {
				break
			}
			token = next
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, "", err)
		return
	}
	c.render(w, r, http.StatusOK, "fleets", "Fleets", struct {
		Fleets []fleetView
		Taken  time.Time
	}{list, taken})
}

// fleetPage is the fleet detail page's data.
type fleetPage struct {
	fleetView
	Taken   time.Time
	Events  []*game.Event
	Metrics []string
	Ranges  []rangeChoice
}

type rangeChoice struct {
	Seconds int
	Label   string
}

var ranges = []rangeChoice{{3600, "1 hour"}, {3 * 3600, "3 hours"}, {12 * 3600, "12 hours"}, {86400, "1 day"},
	{3 * 86400, "3 days"}, {7 * 86400, "1 week"}, {14 * 86400, "2 weeks"}}

// eventsShown is how many of the newest events the fleet page lists.
const eventsShown = 100

func (c *Console) fleet(w http.ResponseWriter, r *http.Request) {
	byFleet, taken := c.metricsByFleet()
	var p fleetPage
	err := c.read(r, func(tx store.Tx) error {
		f, err := tx.GetFleet(r.PathValue("id"))
		if err != nil {
			return err
		}
		p.fleetView = fleetView{Fleet: f, Total: total(byFleet[f.ID]), Locations: byFleet[f.ID]}
		p.Events, err = newestEvents(tx, f.ID, c.now())
		return err
	})
	if err != nil {
		c.readFailed(w, r, "Fleet "+r.PathValue("id"), err)
		return
	}
	p.Taken, p.Metrics, p.Ranges = taken, game.FleetMetricNames, ranges
	c.render(w, r, http.StatusOK, "fleet", p.Fleet.Name, p)
}

// newestEvents returns the fleet's newest events of the last week, newest
// first.
func newestEvents(tx store.Tx, fleetID string, now time.Time) ([]*game.Event, error) {
	var all []*game.Event
	token := ""
	for pages := 0; pages < 20; pages++ {
		list, next, err := tx.ListEvents(fleetID, now.Add(-7*24*time.Hour), time.Time{}, store.Page{Limit: 500, Token: token})
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
		if len(all) > eventsShown {
			all = all[len(all)-eventsShown:]
		}
		if next == "" {
			break
		}
		token = next
	}
	slices.Reverse(all)
	return all, nil
}

// locationView is a location and the fleets in it.
type locationView struct {
	Location *game.Location
	Fleets   []string
}

func (c *Console) locations(w http.ResponseWriter, r *http.Request) {
	var list []locationView
	err := c.read(r, func(tx store.Tx) error {
		locs, _, err := tx.ListLocations(store.Page{Limit: maxListed})
		if err != nil {
			return err
		}
		for _, l := range locs {
			fleets, err := tx.FleetsInLocation(l.Name)
			if err != nil {
				return err
			}
			list = append(list, locationView{Location: l, Fleets: fleets})
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, "", err)
		return
	}
	c.render(w, r, http.StatusOK, "locations", "Locations", list)
}

// computeView is a compute and its live server processes.
type computeView struct {
	Compute   *game.Compute
	Processes []*game.Process
}

func (c *Console) computes(w http.ResponseWriter, r *http.Request) {
	var f *game.Fleet
	var list []computeView
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(r.PathValue("id")); err != nil {
			return err
		}
		computes, _, err := tx.ListComputes(f.ID, store.ComputeFilter{}, store.Page{Limit: maxListed})
		if err != nil {
			return err
		}
		procs, _, err := tx.ListProcesses(f.ID, "", store.Page{Limit: maxListed})
		if err != nil {
			return err
		}
		for _, cp := range computes {
			cv := computeView{Compute: cp}
			for _, p := range procs {
				if p.ComputeName == cp.Name {
					cv.Processes = append(cv.Processes, p)
				}
			}
			list = append(list, cv)
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, "Fleet "+r.PathValue("id"), err)
		return
	}
	c.render(w, r, http.StatusOK, "computes", "Computes of "+f.Name, struct {
		Fleet    *game.Fleet
		Computes []computeView
	}{f, list})
}

// deregister is DeregisterCompute from the computes page.
func (c *Console) deregister(w http.ResponseWriter, r *http.Request) {
	fleetID, name := r.PathValue("id"), r.PostFormValue("compute")
	err := c.route(r, fleetID)
	if err == nil {
		_, err = c.cfg.Computes.DeregisterCompute(r.Context(), &wire.DeregisterComputeInput{FleetId: &fleetID, ComputeName: &name})
	}
	if err != nil {
		c.actionFailed(w, r, "Compute "+name, err)
		return
	}
	http.Redirect(w, r, "/console/fleets/"+urlPathEscape(fleetID)+"/computes", http.StatusSeeOther)
}

// actionFailed answers a failed action with the error's message (a
// *game.Error's message is meant for callers) or a generic one.
func (c *Console) actionFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	if c.elsewhere(w, r, err) {
		return
	}
	var ge *game.Error
	switch {
	case game.IsKind(err, game.NotFound):
		c.notFound(w, r, what)
	case asGameError(err, &ge) && ge.Kind == game.InvalidRequest:
		c.fail(w, r, http.StatusBadRequest, ge.Error())
	case asGameError(err, &ge) && ge.Kind != game.Internal:
		c.fail(w, r, http.StatusConflict, ge.Error())
	default:
		c.cfg.Log.Error("console action", "path", r.URL.Path, "err", err)
		c.fail(w, r, http.StatusInternalServerError, "The action failed. Try again shortly.")
	}
}
