package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/gateway"
)

// playerFlags defines the player gateway flags of "anylift serve" and
// returns the function that reads them into the listen address and the
// gateway's configuration. Without a token key or dev mode the gateway
// stays off (the listen address comes back empty).
func playerFlags(fs *flag.FlagSet) func() (string, gateway.Config, error) {
	listen := fs.String("player-listen", "127.0.0.1:9872", "address of the player gateway (empty: off; it also stays off without a token key or --player-dev-mode)")
	secret := fs.String("player-jwt-hs256-secret", "", "HS256 secret of player tokens (at least 32 bytes; prefer --player-jwt-hs256-secret-file)")
	secretFile := fs.String("player-jwt-hs256-secret-file", "", "file holding the HS256 secret of player tokens")
	keyFile := fs.String("player-jwt-public-key", "", "PEM public key file of player tokens: RSA (RS256) or Ed25519 (EdDSA)")
	issuer := fs.String("player-jwt-issuer", "", "required iss of player tokens (empty: not checked)")
	audience := fs.String("player-jwt-audience", "", "required aud of player tokens (empty: not checked)")
	devMode := fs.Bool("player-dev-mode", false, "INSECURE: players are not authenticated; the player id comes from the X-Anylift-Player-Id header")
	fleets := fs.String("player-allowed-fleets", "", "comma-separated fleet ids players may use (* for all; empty in dev mode: all)")
	aliases := fs.String("player-allowed-aliases", "", "comma-separated alias ids players may use (* for all)")
	queues := fs.String("player-allowed-queues", "", "comma-separated queue names players may create sessions on (* for all)")
	rate := fs.Float64("player-rate", 10, "requests per second allowed to each player (negative: no limit)")
	burst := fs.Int("player-burst", 20, "burst of requests allowed to each player")
	origins := fs.String("player-cors-origins", "", "comma-separated origins allowed to call the gateway from browsers (* for any)")
	grace := fs.Duration("player-rejoin-grace", 2*time.Minute, "how long a dropped or left seat is held for its player to rejoin (negative: rejoin off)")
	createTimeout := fs.Duration("player-create-timeout", 30*time.Second, "how long a create waits for the game session to become ACTIVE or the placement FULFILLED")
	return func() (string, gateway.Config, error) {
		cfg := gateway.Config{
			Auth:          gateway.AuthConfig{Issuer: *issuer, Audience: *audience, DevMode: *devMode},
			AllowedFleets: list(*fleets), AllowedAliases: list(*aliases), AllowedQueues: list(*queues),
			RatePerSecond: *rate, Burst: *burst, CORSOrigins: list(*origins), RejoinGrace: *grace, CreateTimeout: *createTimeout,
		}
		if *secret != "" && *secretFile != "" {
			return "", cfg, fmt.Errorf("--player-jwt-hs256-secret and --player-jwt-hs256-secret-file are exclusive")
		}
		cfg.Auth.HS256Secret = []byte(*secret)
		if *secretFile != "" {
			b, err := os.ReadFile(*secretFile)
			if err != nil {
				return "", cfg, fmt.Errorf("--player-jwt-hs256-secret-file: %w", err)
			}
			cfg.Auth.HS256Secret = []byte(strings.TrimRight(string(b), "\r\n"))
		}
		if *keyFile != "" {
			b, err := os.ReadFile(*keyFile)
			if err != nil {
				return "", cfg, fmt.Errorf("--player-jwt-public-key: %w", err)
			}
			cfg.Auth.PublicKeyPEM = b
		}
		if len(cfg.Auth.HS256Secret) == 0 && len(cfg.Auth.PublicKeyPEM) == 0 && !*devMode {
			return "", cfg, nil
		}
		return *listen, cfg, nil
	}
}

// list splits a comma-separated flag value, dropping empty items.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
