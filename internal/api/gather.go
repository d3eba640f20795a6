package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/anylift/anylift/internal/extapi"
	"github.com/anylift/anylift/internal/game"
)

// Anylift's own operations with fleet ownership: faults live in the memory
// of the node owning their fleet (control/faults.go), so an operation on
// one fleet's faults is relayed to its owner like any call, and one on
// every fleet's (ListFaults, ClearFaults and DescribeStatus without a
// FleetId) is asked of every live node, whose answers the entry merges.

// SetPeers sets what lists the other live nodes' forwarding addresses,
// for the operations every node answers in part; nil asks none.
func (h *Handler) SetPeers(peers func(ctx context.Context) ([]string, error)) {
	if peers == nil {
		h.peers.Store(nil)
		return
	}
	h.peers.Store(&peers)
}

// errGather is the "error" of one of Anylift's own operations that every
// node answers in part.
var errGather = errors.New("asked of every node")

// gathers reports whether op on input in is asked of every node: a
// ListFaults, ClearFaults or DescribeStatus that names no fleet.
func (h *Handler) gathers(ctx context.Context, op string, in any) bool {
	switch op {
	case extapi.OpListFaults, extapi.OpClearFaults, extapi.OpDescribeStatus:
		return h.fleetOf(ctx, in) == ""
	}
	return false
}

// gather runs op here and on every other live node and merges the
// answers. A node that cannot be asked fails the operation (500): a
// partial list of faults would look whole.
func (h *Handler) gather(r *http.Request, op string, body []byte) (any, error) {
	ctx := r.Context()
	out, err := h.runExtension(ctx, op, body, func(any) error { return nil })
	if op == extapi.OpClearFaults && game.IsKind(err, game.NotFound) {
		out, err = &extapi.ClearFaultsOutput{Faults: []extapi.Fault{}}, nil // another node may hold it
	}
	if err != nil {
		return nil, err
	}
	var bases []string
	if p := h.peers.Load(); p != nil && h.relay != nil {
		if bases, err = (*p)(ctx); err != nil {
			return nil, err
		}
	}
	for _, base := range bases {
		ans, err := h.relay.Ask(ctx, r, body, base)
		if err != nil {
			return nil, game.Errorf(game.Internal, "node %s could not be asked: %v", base, err)
		}
		if ans.Status != http.StatusOK {
			if op == extapi.OpClearFaults && strings.HasPrefix(ans.Header.Get("X-Amzn-Errortype"), "NotFound") {
				continue
			}
			return nil, game.Errorf(game.Internal, "node %s answered %d: %.200s", base, ans.Status, ans.Body)
		}
		if err := mergeAnswer(op, out, ans.Body); err != nil {
			return nil, game.Errorf(game.Internal, "the answer of node %s: %v", base, err)
		}
	}
	if c, ok := out.(*extapi.ClearFaultsOutput); ok {
		var in extapi.ClearFaultsInput
		json.Unmarshal(body, &in) // decoded once already
		if in.FaultId != "" && len(c.Faults) == 0 {
			return nil, game.Errorf(game.NotFound, "fault %s is not in force", in.FaultId)
		}
	}
	return out, nil
}

// mergeAnswer adds another node's answer b to out, op's output.
func mergeAnswer(op string, out any, b []byte) error {
	switch o := out.(type) {
	case *extapi.ListFaultsOutput:
		var more extapi.ListFaultsOutput
		if err := json.Unmarshal(b, &more); err != nil {
			return err
		}
		o.Faults = sortFaults(append(o.Faults, more.Faults...))
	case *extapi.ClearFaultsOutput:
		var more extapi.ClearFaultsOutput
		if err := json.Unmarshal(b, &more); err != nil {
			return err
		}
		o.Faults = sortFaults(append(o.Faults, more.Faults...))
	case *extapi.DescribeStatusOutput:
		// Every node reads the same store; only the faults, in each
		// node's memory, differ.
		var more extapi.DescribeStatusOutput
		if err := json.Unmarshal(b, &more); err != nil {
			return err
		}
		faults := map[string][]extapi.Fault{}
		for _, f := range more.Fleets {
			faults[f.FleetId] = f.Faults
		}
		for i := range o.Fleets {
			f := &o.Fleets[i]
			for _, ft := range faults[f.FleetId] {
				if !slices.ContainsFunc(f.Faults, func(x extapi.Fault) bool { return x.FaultId == ft.FaultId }) {
					f.Faults = append(f.Faults, ft)
				}
			}
			f.Faults = sortFaults(f.Faults)
		}
	default:
		return fmt.Errorf("%s is not answered by every node", op)
	}
	return nil
}

// sortFaults orders faults oldest first, as one node lists them.
func sortFaults(fs []extapi.Fault) []extapi.Fault {
	slices.SortStableFunc(fs, func(a, b extapi.Fault) int {
		if a.CreatedAt == nil || b.CreatedAt == nil {
			return 0
		}
		return a.CreatedAt.Compare(*b.CreatedAt)
	})
	return fs
}
