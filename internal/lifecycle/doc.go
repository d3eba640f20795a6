// Package lifecycle holds the end-to-end tests of server processes: the
// real server with a settable clock, processes driven through the Go
// server SDK and through raw WebSocket frames, and the control-plane API
// through the AWS SDK for Go v2. It has no code of its own.
package lifecycle
