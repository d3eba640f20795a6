package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const healthcheckUsage = `usage: anylift healthcheck [--listen ADDR] [--path /readyz] [--timeout 5s]

Asks the server listening at ADDR whether it is ready (GET /readyz, or
--path) and exits 0 on a 200 answer, 1 otherwise: a container's health
check, with no curl in the image. ADDR is what "anylift serve" listens at:
--listen, else ANYLIFT_LISTEN, else "listen" in the JSON file of
ANYLIFT_CONFIG, else 127.0.0.1:9870. An address on every interface
(0.0.0.0:9870, :9870, [::]:9870) is asked on the loopback one.
`

// healthcheck GETs the server's /readyz (or --path) at the address serve
// reads from the same settings, and fails unless the answer is 200.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "", "address the server listens at (default: as serve reads it, else 127.0.0.1:9870)")
	path := fs.String("path", "/readyz", "path to GET: /readyz (takes traffic) or /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "time limit of the check")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, healthcheckUsage+"\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))
	}
	addr, err := healthcheckAddr(*listen, getenv)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(*path, "/") {
		return fmt.Errorf("healthcheck: --path must start with /")
	}
	url := "http://" + addr + *path
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s: %s", url, resp.Status, answer)
	}
	fmt.Fprintf(stdout, "%s: %s\n", url, answer)
	return nil
}

// healthcheckAddr is the host:port to ask: the flag, else ANYLIFT_LISTEN,
// else "listen" in the config file, else serve's default; an unspecified
// host becomes the loopback address of its family.
func healthcheckAddr(listen string, getenv func(string) string) (string, error) {
	if listen == "" {
		listen = getenv(envName("listen"))
	}
	if listen == "" {
		if path := getenv(envName("config")); path != "" {
			v, err := configListen(path)
			if err != nil {
				return "", err
			}
			listen = v
		}
	}
	if listen == "" {
		listen = "127.0.0.1:9870"
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("healthcheck: listen address %q: %w", listen, err)
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

// configListen reads "listen" from a config file of serve's; the file's
// other settings are serve's and not checked here.
func configListen(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	var values struct {
		Listen string `json:"listen"`
	}
	if err := json.Unmarshal(b, &values); err != nil {
		return "", fmt.Errorf("config file %s: %w", path, err)
	}
	return values.Listen, nil
}
