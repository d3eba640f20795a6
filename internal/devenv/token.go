package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
)

// refresh gets a new compute auth token and writes the game server's
// variables, with it, to <data dir>/gamelift.env (mode 0600).
func (e *Env) refresh(ctx context.Context, cfg Config) error {
	out, err := e.Client.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{
		FleetId: aws.String(e.FleetID), ComputeName: aws.String(ComputeName),
	})
	if err != nil {
		return fmt.Errorf("getting an auth token: %w", err)
	}
	e.mu.Lock()
	e.token, e.exp, e.got = aws.ToString(out.AuthToken), aws.ToTime(out.ExpirationTimestamp), cfg.Now()
	e.mu.Unlock()
	var b strings.Builder
	for _, kv := range e.sdkVars() {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], kv[1])
	}
	path := filepath.Join(cfg.Server.DataDir, envFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// sdkVars are the GAMELIFT_SDK_* variables of a game server on the dev
// compute.
func (e *Env) sdkVars() [][2]string {
	tok, _ := e.Token()
	return [][2]string{
		{"GAMELIFT_SDK_WEBSOCKET_URL", e.Server.SDKEndpoint()},
		{"GAMELIFT_SDK_AUTH_TOKEN", tok},
		{"GAMELIFT_SDK_HOST_ID", ComputeName},
		{"GAMELIFT_SDK_FLEET_ID", e.FleetID},
	}
}

// keepToken gets a new token when half of the current one's lifetime has
// passed, until ctx ends; a failure is retried 5 seconds later.
func (e *Env) keepToken(ctx context.Context, cfg Config) {
	var next time.Time
	for {
		if next.IsZero() {
			e.mu.Lock()
			next = e.got.Add(max(e.exp.Sub(e.got)/2, time.Second))
			e.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-cfg.Wake(next):
		}
		if err := e.refresh(ctx, cfg); err != nil {
			if ctx.Err() != nil {
				return
			}
			cfg.Log.Warn("could not refresh the auth token; retrying in 5s", "err", err)
			next = cfg.Now().Add(5 * time.Second)
			continue
		}
		next = time.Time{}
		_, exp := e.Token()
		cfg.Log.Info("auth token refreshed", "expires", exp.UTC().Format(time.RFC3339), "file", filepath.Join(cfg.Server.DataDir, envFile))
		if cfg.Observe != nil {
			cfg.Observe(exp)
		}
	}
}
