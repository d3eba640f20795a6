package server

import (
	"context"
	"log/slog"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/store"
)

// StartOn starts a server on st, a store the test opened (and may wrap),
// with cfg.Credentials as its keys.
func StartOn(ctx context.Context, cfg Config, st store.Store) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	keys, err := access.NewKeyring(access.KeyringConfig{Fixed: cfg.Credentials, Known: Actions(), Log: cfg.Log, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	return start(ctx, cfg, st, keys)
}
