package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/store"
)

// Several nodes on one database work only when every node has a
// forwarding listener (--node-listen) and they share one node secret:
// a push for a game server connected to another node travels through it.
// A node that would serve beside others without that refuses to start,
// saying what is missing, rather than leaving sessions ACTIVATING until
// their timeout. Nodes that start at the same moment cannot see each
// other yet; the watch that runs with the heartbeat says it loudly then.

// peerConfirmWait bounds how long a starting node watches a peer's
// heartbeat before deciding it is dead: a node killed moments ago still
// looks alive for --node-ttl, and a restart must not be refused for it.
// Heartbeats are a second apart.
const peerConfirmWait = 3 * time.Second

// peerWatchEvery is how often a running node looks for peers it cannot
// serve beside.
const peerWatchEvery = 10 * time.Second

// peers lists the other nodes whose heartbeat is within the node ttl.
func (s *Server) peers(ctx context.Context) ([]*store.Node, error) {
	var out []*store.Node
	err := s.store.View(ctx, func(tx store.Tx) error {
		list, err := tx.ListNodes(s.svc.Config().NodeTTL)
		for _, n := range list {
			if n.Alive && n.ID != s.svc.NodeID() {
				out = append(out, n)
			}
		}
		return err
	})
	return out, err
}

// peerProblem says why this node cannot serve beside n, or "".
func (s *Server) peerProblem(n *store.Node) string {
	switch {
	case s.cfg.NodeListen == "":
		return fmt.Sprintf("another node is serving this database: %s (%s). Several nodes on one database need --node-listen on every node, the same ANYLIFT_NODE_SECRET, and --sdk-endpoint naming their load balancer (docs/several-nodes.md); without --node-listen this node cannot receive the messages other nodes send to the game servers connected here, and their sessions would stay ACTIVATING. Start this node with --node-listen, or stop the other one",
			n.ID, describePeer(n))
	case n.Address == "":
		return fmt.Sprintf("node %s (%s) is serving this database without --node-listen: the messages for game servers connected to it cannot reach it, and its sessions would stay ACTIVATING. Restart it with --node-listen and the same ANYLIFT_NODE_SECRET as this node (docs/several-nodes.md)",
			n.ID, describePeer(n))
	}
	return ""
}

// peerWarning says why fleet ownership is not in force beside n, or "":
// it is in force only while every live node takes part
// (internal/owners.On), so one node left in the shared mode, by
// --fleet-ownership=false or an older version, turns it off on them all.
// That is how a rolling upgrade works, so it is said, not refused.
func (s *Server) peerWarning(n *store.Node) string {
	switch {
	case s.owners != nil && !n.OwnsFleets && n.Address != "":
		return fmt.Sprintf("node %s (%s) takes no part in fleet ownership (it runs with --fleet-ownership=false, or is of an older version): "+
			"ownership is off on every node while it is live, and every node writes every fleet through the database. "+
			"Unless it is being upgraded, restart it without --fleet-ownership=false (docs/several-nodes.md)", n.ID, describePeer(n))
	case s.owners == nil && n.OwnsFleets && s.cfg.FleetOwnership == OwnershipOff:
		return fmt.Sprintf("this node runs with --fleet-ownership=false beside node %s (%s), which takes part in fleet ownership: "+
			"ownership is off on every node while this one is live. Give every node the same --fleet-ownership (docs/several-nodes.md)", n.ID, describePeer(n))
	}
	return ""
}

// warnPeer logs peerWarning for n, once per node. checkPeers calls it
// before the node serves, watchPeers after, from one goroutine.
func (s *Server) warnPeer(n *store.Node) {
	w := s.peerWarning(n)
	if w == "" || s.warned[n.ID] {
		return
	}
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[n.ID] = true
	s.cfg.Log.Warn(w, "node", n.ID)
}

func describePeer(n *store.Node) string {
	addr := n.Address
	if addr == "" {
		addr = "no forwarding listener"
	}
	return fmt.Sprintf("started %s, %s", n.Started.UTC().Format(time.RFC3339), addr)
}

// checkPeers runs before the node joins: it refuses to start beside a
// live node it cannot work with, and checks that every peer's forwarding
// listener accepts this node's signature, logging an error when one does
// not. A peer whose listener cannot be reached is only warned about: it
// may have died moments ago.
func (s *Server) checkPeers(ctx context.Context) error {
	if !onPostgres(s.cfg) {
		return nil // SQLite: one server per data directory, held by its lock
	}
	peers, err := s.peers(ctx)
	if err != nil || len(peers) == 0 {
		return err
	}
	var doubtful []*store.Node
	for _, n := range peers {
		if s.peerProblem(n) != "" {
			doubtful = append(doubtful, n)
		}
	}
	if len(doubtful) > 0 {
		live, err := s.stillBeating(ctx, doubtful, peerConfirmWait)
		if err != nil {
			return err
		}
		if len(live) > 0 {
			return errors.New(s.peerProblem(live[0]))
		}
	}
	for _, n := range peers {
		s.warnPeer(n)
	}
	if s.procs.fwd == nil {
		return nil
	}
	for _, n := range peers {
		if n.Address == "" {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, cluster.Timeout)
		err := s.procs.fwd.Ping(pctx, n.Address, s.svc.NodeID())
		cancel()
		switch {
		case errors.Is(err, cluster.ErrRefused):
			// Not a refusal to start: rotating the secret restarts the
			// nodes one by one, and pushes between nodes with different
			// secrets fall back to delivery on reconnect meanwhile.
			s.cfg.Log.Error("another node refuses this node's signature: unless the node secret is being rotated, every node must share one ANYLIFT_NODE_SECRET; until then messages to the game servers connected to it arrive only when they reconnect",
				"node", n.ID, "address", n.Address, "err", err, "clock_window", cluster.DefaultWindow)
		case err != nil:
			s.cfg.Log.Warn("cannot reach another node's forwarding listener; messages to the game servers connected to it will not arrive until it can be reached (check its --node-advertise and the network between nodes)",
				"node", n.ID, "address", n.Address, "err", err)
		}
	}
	return nil
}

// stillBeating returns those of nodes whose heartbeat advances within
// wait: a live node beats every second, a dead one's record only ages.
func (s *Server) stillBeating(ctx context.Context, nodes []*store.Node, wait time.Duration) ([]*store.Node, error) {
	first := make(map[string]time.Time, len(nodes))
	for _, n := range nodes {
		first[n.ID] = n.Heartbeat
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	var live []*store.Node
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return live, nil
		case <-t.C:
		}
		now, err := s.peers(ctx)
		if err != nil {
			return nil, err
		}
		live = live[:0]
		for _, n := range now {
			if at, ok := first[n.ID]; ok && n.Heartbeat.After(at) {
				live = append(live, n)
			}
		}
		if len(live) == len(nodes) {
			return live, nil
		}
	}
}

// watchPeers runs while the node serves: a node that appears beside this
// one and cannot work with it (both started at the same moment, say) is
// logged as an error, once per node.
func (s *Server) watchPeers(ctx context.Context) {
	if !onPostgres(s.cfg) {
		return
	}
	told := map[string]bool{}
	t := time.NewTicker(peerWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		peers, err := s.peers(ctx)
		if err != nil {
			continue // the heartbeat reports an unreachable store
		}
		for _, n := range peers {
			if p := s.peerProblem(n); p != "" && !told[n.ID] {
				told[n.ID] = true
				s.cfg.Log.Error("this node cannot work beside another: "+p, "node", n.ID)
			}
			s.warnPeer(n)
		}
	}
}
