// Package wire holds GameLift's wire shapes as plain data and the two codecs
// the control plane speaks: AWS JSON 1.1 and Smithy RPC v2 CBOR.
//
// The shapes, enums, validation and operation index are generated from the
// GameLift API model (see gen); the codecs and the Time type are written by
// hand. Nothing here knows about storage or HTTP routing.
package wire

//go:generate go run ./gen -out .
