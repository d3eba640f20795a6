package server

import (
	"net/http"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/api"
	"github.com/anylift/anylift/internal/events"
	"github.com/anylift/anylift/internal/store"
)

// newEvents builds the event stream and webhook deliverer: the stream
// takes the API's credentials (SigV4 or HTTP Basic), and is open only
// with --insecure-any-credentials.
func newEvents(cfg Config, st store.Store, keys *access.Keyring) *events.Service {
	ec := cfg.Events
	verifier := &api.Verifier{Keys: keys, Region: signingRegion(cfg), Now: cfg.Now}
	ec.Auth = events.Auth{
		Keys: keys.Key,
		Open: cfg.AnyCredentials,
		SigV4: func(r *http.Request) (*access.Key, error) {
			_, key, err := verifier.Verify(r, nil)
			if err != nil {
				return nil, err
			}
			return key, nil
		},
	}
	if ec.Now == nil {
		ec.Now = cfg.Now
	}
	ec.Log = cfg.Log
	return events.New(st, ec)
}
