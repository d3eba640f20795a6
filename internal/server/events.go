package server

import (
	"net/http"

	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/store"
)

// newEvents builds the event stream and webhook deliverer: the stream
// takes the API's credentials (SigV4 or HTTP Basic), and is open only
// with --insecure-any-credentials.
func newEvents(cfg Config, st store.Store) *events.Service {
	ec := cfg.Events
	verifier := &api.Verifier{Secrets: cfg.Credentials, Region: signingRegion(cfg), Now: cfg.Now}
	ec.Auth = events.Auth{
		Credentials: cfg.Credentials,
		Open:        cfg.AnyCredentials,
		SigV4: func(r *http.Request) error {
			if _, err := verifier.Verify(r, nil); err != nil {
				return err
			}
			return nil
		},
	}
	if ec.Now == nil {
		ec.Now = cfg.Now
	}
	ec.Log = cfg.Log
	return events.New(st, ec)
}
