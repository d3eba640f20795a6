// Package soak holds a long-running test of the real "anylift serve"
// binary under mixed API and game server load, which checks that the
// server's memory, goroutines and open files stay flat. It runs only when
// ANYLIFT_SOAK names a duration (see soak_test.go), never in CI.
package soak
