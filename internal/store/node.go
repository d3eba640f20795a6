package store

import "time"

// Node is one "anylift serve" process sharing the store with others.
type Node struct {
	ID string
	// Address is the base URL of the node's internal forwarding listener
	// (http://host:port); empty when it has none.
	Address  string
	Started  time.Time
	Draining bool
	// Alive reports whether the node's last heartbeat is within the ttl
	// the reader asked for, judged by the database's clock, so that
	// clocks that differ between nodes do not matter.
	Alive bool
	// Heartbeat is the node's last heartbeat by the database's clock:
	// two readings of a live node differ within a tick or two.
	Heartbeat time.Time
	// OwnsFleets reports that the node takes part in fleet ownership
	// (FleetOwnerTx); a node of an older version does not.
	OwnsFleets bool
}

// ProcessKey names a server process.
type ProcessKey struct {
	FleetID, ComputeName, PID string
}

// NodeTx records the nodes sharing the store and which node holds each
// process's connection. Heartbeats are stamped with the database's clock.
type NodeTx interface {
	// BeatNode inserts or refreshes node n and stamps its heartbeat with
	// the database's clock (n.Alive is ignored).
	BeatNode(n *Node) error
	// GetNode returns a node, Alive when its last heartbeat is less than
	// ttl old by the database's clock; NotFound when absent.
	GetNode(id string, ttl time.Duration) (*Node, error)
	// ListNodes returns every node, oldest first, Alive set as in GetNode.
	ListNodes(ttl time.Duration) ([]*Node, error)
	// DeleteNode removes a node (a clean shutdown); its held processes are
	// then orphaned.
	DeleteNode(id string) error
	// HoldProcess records that nodeID holds the process's connection.
	HoldProcess(k ProcessKey, nodeID string) error
	// ReleaseProcess clears the process's holder when it is nodeID and
	// reports whether it was: a process that reconnected to another node
	// is that node's now.
	ReleaseProcess(k ProcessKey, nodeID string) (bool, error)
	// ProcessHolder returns the id of the node that holds the process's
	// connection, "" when none does.
	ProcessHolder(k ProcessKey) (string, error)
	// OrphanedProcesses lists up to max live, connected processes whose
	// holding node's heartbeat is ttl old or more, or which is gone.
	OrphanedProcesses(ttl time.Duration, max int) ([]ProcessKey, error)
	NodeRepairTx
	FleetOwnerTx
}

// Holding is one process's holder record.
type Holding struct {
	Process ProcessKey
	NodeID  string
}

// NodeRepairTx finds holder records that no longer say the truth.
type NodeRepairTx interface {
	// StrandedProcesses lists up to max processes, not ended, that nodeID
	// holds but whose record says disconnected: another node took nodeID
	// for dead (its heartbeat stalled) while the connection lived, or a
	// disconnect was recorded without releasing the holder.
	StrandedProcesses(nodeID string, max int) ([]ProcessKey, error)
	// EndedHoldings lists up to max holder records of processes that have
	// ended or are gone, held by a node that is gone or whose heartbeat is
	// ttl old by the database's clock: nothing will release them.
	EndedHoldings(ttl time.Duration, max int) ([]Holding, error)
	// ReleaseNodeProcesses runs when node nodeID starts: it holds no
	// connection yet, whatever the store says from before a restart with
	// the same id. In one conditional update it marks disconnected at at
	// every live process held by nodeID still marked connected, then drops
	// every holder record of nodeID. It returns how many processes it
	// marked disconnected.
	ReleaseNodeProcesses(nodeID string, at time.Time) (int, error)
}
