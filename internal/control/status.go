package control

import (
	"context"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// DescribeStatus is the status view, Anylift's own (extapi): per fleet
// (one, or every fleet that is not deleted), its computes, its server
// processes and game sessions that have not ended, and its faults in
// force, each list capped at extapi.MaxListed. One read transaction.
// Errors: NotFound for an unknown FleetId.
func (s *Service) DescribeStatus(ctx context.Context, in *extapi.DescribeStatusInput) (*extapi.DescribeStatusOutput, error) {
	out := &extapi.DescribeStatusOutput{Now: s.clock(), Fleets: []extapi.FleetStatus{}}
	err := s.view(ctx, func(tx store.Tx) error {
		out.Fleets = out.Fleets[:0]
		fleets, err := s.statusFleets(tx, in.FleetId)
		if err != nil {
			return err
		}
		for _, f := range fleets {
			fs, cut, err := s.fleetStatus(tx, f)
			if err != nil {
				return err
			}
			out.Truncated = out.Truncated || cut
			out.Fleets = append(out.Fleets, fs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// statusFleets is the fleet named, or every fleet not deleted.
func (s *Service) statusFleets(tx store.Tx, id string) ([]*game.Fleet, error) {
	if id != "" {
		f, err := tx.GetFleet(game.ResourceID(id, "fleet"))
		if err != nil {
			return nil, err
		}
		return []*game.Fleet{f}, nil
	}
	var out []*game.Fleet
	page := store.Page{Limit: 100}
	for len(out) < extapi.MaxListed {
		list, next, err := tx.ListFleets(page)
		if err != nil {
			return nil, err
		}
		for _, f := range list {
			if f.Status != game.FleetDeleting && f.Status != game.FleetTerminated {
				out = append(out, f)
			}
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	return out, nil
}

// fleetStatus reads one fleet's part; cut is true when a list was capped.
func (s *Service) fleetStatus(tx store.Tx, f *game.Fleet) (extapi.FleetStatus, bool, error) {
	out := extapi.FleetStatus{FleetId: f.ID, Name: f.Name, Status: f.Status, Locations: f.Locations, FaultInjection: s.fx != nil,
		Computes: []extapi.ComputeStatus{}, Processes: []extapi.ProcessStatus{}, GameSessions: []extapi.GameSessionStatus{},
		Faults: []extapi.Fault{}}
	computes, next, err := tx.ListComputes(f.ID, store.ComputeFilter{}, store.Page{Limit: extapi.MaxListed})
	if err != nil {
		return out, false, err
	}
	cut := next != ""
	for _, c := range computes {
		out.Computes = append(out.Computes, extapi.ComputeStatus{ComputeName: c.Name, Location: c.Location, IpAddress: c.IPAddress, Status: c.Status})
	}
	sessions, err := tx.LiveGameSessions(f.ID, "")
	if err != nil {
		return out, false, err
	}
	live := map[string]bool{}
	for _, gs := range sessions {
		live[gs.ID] = true
		if len(out.GameSessions) == extapi.MaxListed {
			cut = true
			continue
		}
		out.GameSessions = append(out.GameSessions, extapi.GameSessionStatus{GameSessionId: gs.ID, Name: gs.Name, Status: gs.Status,
			Location: gs.Location, ProcessId: gs.ProcessID, CurrentPlayerSessionCount: gs.CurrentPlayerSessionCount,
			MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount, CreationTime: gs.CreationTime})
	}
	procs, next, err := tx.ListProcesses(f.ID, "", store.Page{Limit: extapi.MaxListed})
	if err != nil {
		return out, false, err
	}
	cut = cut || next != ""
	for _, p := range procs {
		ps := extapi.ProcessStatus{ProcessId: p.PID, ComputeName: p.ComputeName, Location: p.Location, Status: p.Status,
			Connected: p.Connected, Healthy: p.Healthy, LastHealthy: p.LastHealthy, Port: p.Port, SdkLanguage: p.SDKLanguage}
		if live[p.GameSessionID] {
			ps.GameSessionId = p.GameSessionID
		}
		out.Processes = append(out.Processes, ps)
	}
	if s.fx != nil {
		for _, fl := range s.fx.set.List(f.ID, s.clock()) {
			out.Faults = append(out.Faults, faultOut(fl))
		}
	}
	return out, cut, nil
}
