// Package multinode tests several real "anylift serve" nodes on one
// PostgreSQL behind a real nginx: processes and API clients go through
// the balancer while a node is killed or drained.
package multinode
