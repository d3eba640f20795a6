package main

import (
	"strings"
	"testing"
	"time"
)

func TestPlayerGatewayFlags(t *testing.T) {
	cfg, err := configFrom(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PlayerListen != "" {
		t.Errorf("without a token key or dev mode the gateway is on at %q", cfg.PlayerListen)
	}
	secret := writeFile(t, "secret", strings.Repeat("s", 40)+"\n")
	cfg, err = configFrom(t, []string{"--player-jwt-hs256-secret-file", secret, "--player-allowed-fleets", "fleet-a, fleet-b",
		"--player-cors-origins", "https://game.example", "--player-rejoin-grace", "45s", "--player-rate", "3"},
		map[string]string{"ANYLIFT_PLAYER_ALLOWED_QUEUES": "ranked"})
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Player
	if cfg.PlayerListen != "127.0.0.1:9872" || string(p.Auth.HS256Secret) != strings.Repeat("s", 40) ||
		len(p.AllowedFleets) != 2 || p.AllowedFleets[1] != "fleet-b" || p.AllowedQueues[0] != "ranked" ||
		p.CORSOrigins[0] != "https://game.example" || p.RejoinGrace != 45*time.Second || p.RatePerSecond != 3 {
		t.Fatalf("flags not applied: %q %+v", cfg.PlayerListen, p)
	}
	if _, err := configFrom(t, []string{"--player-jwt-public-key", "/nonexistent.pem"}, nil); err == nil {
		t.Error("a missing key file was accepted")
	}
	cfg, err = configFrom(t, []string{"--player-dev-mode", "--player-listen", "127.0.0.1:0"}, nil)
	if err != nil || !cfg.Player.Auth.DevMode || cfg.PlayerListen != "127.0.0.1:0" {
		t.Fatalf("dev mode: %v %+v", err, cfg.Player.Auth)
	}
}
