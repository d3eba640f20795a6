package postgres

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"
)

func pgxConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL DSN: %w", err)
	}
	return cfg, nil
}

// describe names the database cfg reaches, without its password, for
// messages: postgres://user@host:port/database (?search_path=... when set).
func describe(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	if sp := cfg.RuntimeParams["search_path"]; sp != "" {
		u.RawQuery = url.Values{"search_path": {sp}}.Encode()
	}
	return u.String()
}
