package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/anylift/anylift/internal/events"
)

// eventFlags defines the event stream and webhook flags of "anylift
// serve" and returns the function that reads them.
func eventFlags(fs *flag.FlagSet) func() (events.Config, error) {
	secret := fs.String("webhook-secret", "", "key of the X-Anylift-Signature HMAC-SHA256 on webhook bodies (empty: unsigned)")
	attempts := fs.Int("webhook-max-attempts", 12, "attempts per webhook notification before giving up")
	backoff := fs.Duration("webhook-backoff", time.Second, "wait after a webhook's first failed attempt, doubled after each further failure")
	maxBackoff := fs.Duration("webhook-max-backoff", 10*time.Minute, "longest wait between webhook attempts")
	timeout := fs.Duration("webhook-timeout", 10*time.Second, "time limit of one webhook attempt")
	retention := fs.Duration("event-retention", 24*time.Hour, "how long events stay in the outbox for consumers that resume (undelivered webhooks stay until their attempts end)")
	poll := fs.Duration("event-poll-interval", 500*time.Millisecond, "how often the outbox is read for events written by other nodes")
	return func() (events.Config, error) {
		if *attempts < 1 {
			return events.Config{}, fmt.Errorf("--webhook-max-attempts must be at least 1")
		}
		for name, d := range map[string]time.Duration{"webhook-backoff": *backoff, "webhook-max-backoff": *maxBackoff,
			"webhook-timeout": *timeout, "event-retention": *retention, "event-poll-interval": *poll} {
			if d <= 0 {
				return events.Config{}, fmt.Errorf("--%s must be positive", name)
			}
		}
		return events.Config{
			Poll:      *poll,
			Retention: *retention,
			Webhook: events.WebhookConfig{
				Secret: []byte(*secret), MaxAttempts: *attempts,
				Backoff: *backoff, MaxBackoff: *maxBackoff, Timeout: *timeout,
			},
		}, nil
	}
}
