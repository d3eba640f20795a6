// Package cli is "anylift <operation>": a command line over the control-plane
// API with the operation names and flags of "aws gamelift". Requests are the
// wire package's input shapes, encoded as the server decodes them, sent over
// AWS JSON 1.1 and signed with SigV4; answers print as the aws CLI prints them.
package cli

//go:generate go run ../wire/gen -cli .
