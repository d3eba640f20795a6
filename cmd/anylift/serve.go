package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/server"
)

// The default rate limit of each access key: generous, so that only a
// runaway client meets it.
const (
	DefaultRateLimit = 5000
	DefaultRateBurst = 10000
)

// serveFlags defines the flags of "anylift serve" into fs and returns the
// function that turns them into a server.Config, whose Log writes to logTo
// at the --log-level.
func serveFlags(fs *flag.FlagSet) func(logTo io.Writer) (server.Config, error) {
	fs.String("config", "", "JSON file of settings, keyed by flag name")
	listen := fs.String("listen", "127.0.0.1:9870", "address of the control-plane API and the process endpoint, plain HTTP and TLS on one port")
	dataDir := fs.String("data-dir", "anylift-data", "directory of the embedded store")
	storeURL := fs.String("store", "", "postgres://... to use PostgreSQL instead of the embedded store")
	region := fs.String("region", "us-west-2", "home region, written into ARNs")
	account := fs.String("account-id", "000000000000", "account id written into ARNs")
	accessKey := fs.String("access-key", "", "access key id accepted by SigV4")
	secretKey := fs.String("secret-key", "", "secret key of --access-key")
	credFile := fs.String("credentials-file", "", "file of accepted keys, one \"ACCESS_KEY_ID SECRET_KEY [POLICY_FILE [rate=N] [burst=N]]\" per line; re-read when it changes")
	rateLimit := fs.Float64("rate-limit", DefaultRateLimit, "API requests per second each access key may make on average (0: no limit); more answer ThrottlingException, which the AWS SDKs retry")
	rateBurst := fs.Int("rate-burst", DefaultRateBurst, "API requests an access key may make at once, beyond --rate-limit, after a quiet spell")
	anyCreds := fs.Bool("insecure-any-credentials", false, "accept any well-formed signature (local development only)")
	anyRegion := fs.Bool("any-signing-region", false, "accept signatures scoped to any region, not only --region")
	sdkEndpoint := fs.String("sdk-endpoint", "", "WebSocket URL advertised to game servers (default ws://<listen address>; set it for machines behind NAT)")
	agentEndpoint := fs.String("agent-endpoint", "", "API URL advertised to agents as a compute's GameLiftAgentEndpoint (default http://<listen address>)")
	tlsListen := fs.String("tls-listen", "127.0.0.1:9871", "address of a TLS-only listener as well (empty: none); --listen speaks TLS too")
	tlsCert := fs.String("tls-cert", "", "certificate for TLS on both listeners, reloaded when the files change (default: self-signed, generated once into --data-dir)")
	tlsKey := fs.String("tls-key", "", "key of --tls-cert")
	unhealthyTimeout := fs.Duration("unhealthy-timeout", 3*time.Minute, "time an active process may go without a healthy report before it is ended as unhealthy")
	healthInterval := fs.Duration("health-check-interval", 0, "deprecated: sets --unhealthy-timeout to three times this, when --unhealthy-timeout is not given")
	lostGrace := fs.Duration("process-lost-grace", 30*time.Second, "time a disconnected process has to reconnect before it is lost")
	tokenTTL := fs.Duration("auth-token-ttl", 15*time.Minute, "lifetime of compute auth tokens")
	reservation := fs.Duration("reservation-timeout", 60*time.Second, "time a RESERVED player session waits to be accepted")
	maxPlayers := fs.Int("max-players-per-session", 200, "cap on MaximumPlayerSessionCount")
	searchPage := fs.Int("search-page-size", 20, "most SearchGameSessions results per page (GameLift: 20)")
	syncMode := fs.String("sqlite-synchronous", "FULL", "SQLite synchronous mode: FULL or NORMAL")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text (key=value lines) or json (one object per line, for log collectors)")
	nodeListen := fs.String("node-listen", "", "address of the internal listener other nodes forward pushes and relay calls to (several nodes on one PostgreSQL, each then owning a share of the fleets; empty: none, one node alone)")
	nodeAdvertise := fs.String("node-advertise", "", "host:port other nodes reach --node-listen at (default: --node-listen's address)")
	nodeSecret := fs.String("node-secret", "", "secret shared by every node, signing forwarded pushes (at least 16 characters; prefer ANYLIFT_NODE_SECRET)")
	nodeID := fs.String("node-id", "", "this node's id in the store (default: random at each start)")
	nodeTTL := fs.Duration("node-ttl", 10*time.Second, "how old a node's heartbeat must be for other nodes to treat it as dead")
	drainTimeout := fs.Duration("drain-timeout", 10*time.Second, "how long a stopping node waits for its processes to move to other nodes")
	fleetOwnership := fs.Bool("fleet-ownership", false, "several nodes: each fleet is owned by one node, which alone writes it and holds it in memory "+
		"(default: on with a postgres:// --store and --node-listen, off without --node-listen; on SQLite no meaning); "+
		"=false: the shared mode, every node writing every fleet, and ownership off on every node while this one is live (docs/several-nodes.md)")
	ev := eventFlags(fs)
	player := playerFlags(fs)
	metricsRetention := fs.Duration("metrics-retention", 14*24*time.Hour, "how long the per-minute metric history behind the console's graphs is kept")
	limits := limitFlags(fs)
	kubeconfig := fs.String("kubeconfig", "", "run container fleets as pods on the Kubernetes cluster of this kubeconfig file (docs/kubernetes.md)")
	kubeInCluster := fs.Bool("kube-in-cluster", false, "run container fleets as pods on the Kubernetes cluster anylift runs in, with its service account")
	kubeNamespace := fs.String("kube-namespace", "", "namespace of the container fleets' pods (default: the kubeconfig context's, or anylift's own in a cluster, else default)")
	kubeSDKEndpoint := fs.String("kube-sdk-endpoint", "", "WebSocket URL game servers in the pods reach anylift at (default: --sdk-endpoint)")
	kubeWatchNodes := fs.Bool("kube-watch-nodes", false, "watch the cluster's nodes (needs list and watch on nodes, a ClusterRole) to recycle the game server container groups of a node cordoned or marked for removal by an autoscaler (INSTANCE_RECYCLED)")
	allowFaults := fs.Bool("allow-fault-injection", false, "serve InjectFault, ListFaults and ClearFaults, for testing games against failures (docs/fault-injection.md); never in production")
	return func(logTo io.Writer) (server.Config, error) {
		creds := map[string]string{}
		if *accessKey != "" || *secretKey != "" {
			if *accessKey == "" || *secretKey == "" {
				return server.Config{}, fmt.Errorf("--access-key and --secret-key go together")
			}
			creds[*accessKey] = *secretKey
		}
		if *rateLimit < 0 || *rateLimit > access.MaxRate || *rateLimit != *rateLimit {
			return server.Config{}, fmt.Errorf("--rate-limit must be from 0 (no limit) to %g requests per second", float64(access.MaxRate))
		}
		if *rateBurst < 1 || *rateBurst > access.MaxBurst {
			return server.Config{}, fmt.Errorf("--rate-burst must be from 1 to %d", access.MaxBurst)
		}
		if *healthInterval > 0 && !flagSet(fs, "unhealthy-timeout") {
			*unhealthyTimeout = 3 * *healthInterval
		}
		if *unhealthyTimeout <= 0 || *healthInterval < 0 {
			return server.Config{}, fmt.Errorf("--unhealthy-timeout and --health-check-interval must be positive")
		}
		if *searchPage < 1 {
			return server.Config{}, fmt.Errorf("--search-page-size must be at least 1")
		}
		log, err := logger(logTo, *logLevel, *logFormat)
		if err != nil {
			return server.Config{}, err
		}
		ev, err := ev()
		if err != nil {
			return server.Config{}, err
		}
		playerListen, playerCfg, err := player()
		if err != nil {
			return server.Config{}, err
		}
		lim, err := limits()
		if err != nil {
			return server.Config{}, err
		}
		ownership := server.OwnershipDefault
		if flagSet(fs, "fleet-ownership") {
			ownership = server.OwnershipOff
			if *fleetOwnership {
				ownership = server.OwnershipOn
			}
		}
		var kube *server.KubeConfig
		switch {
		case *kubeconfig != "" && *kubeInCluster:
			return server.Config{}, fmt.Errorf("--kubeconfig and --kube-in-cluster go apart: give one")
		case *kubeconfig != "" || *kubeInCluster:
			kube = &server.KubeConfig{Kubeconfig: *kubeconfig, Namespace: *kubeNamespace, SDKEndpoint: *kubeSDKEndpoint, WatchNodes: *kubeWatchNodes}
		case *kubeNamespace != "" || *kubeSDKEndpoint != "" || *kubeWatchNodes:
			return server.Config{}, fmt.Errorf("--kube-namespace, --kube-sdk-endpoint and --kube-watch-nodes need --kubeconfig or --kube-in-cluster")
		}
		return server.Config{
			Log:       log,
			TLSListen: *tlsListen, TLSCert: *tlsCert, TLSKey: *tlsKey,
			UnhealthyTimeout: *unhealthyTimeout, ProcessLostGrace: *lostGrace,
			Listen: *listen, DataDir: *dataDir, Store: *storeURL,
			Region: *region, AccountID: *account,
			Credentials: creds, CredentialsFile: *credFile, AnyCredentials: *anyCreds, AnySigningRegion: *anyRegion,
			RateLimit:            access.Rate{PerSecond: *rateLimit, Burst: *rateBurst},
			SQLiteSynchronous:    *syncMode,
			AuthTokenTTL:         *tokenTTL,
			SDKEndpoint:          *sdkEndpoint,
			AgentEndpoint:        *agentEndpoint,
			ReservationTimeout:   *reservation,
			MaxPlayersPerSession: *maxPlayers,
			SearchPageSize:       *searchPage,
			Events:               ev,
			MetricsRetention:     *metricsRetention,
			PlayerListen:         playerListen,
			Player:               playerCfg,
			NodeListen:           *nodeListen, NodeAdvertise: *nodeAdvertise, NodeSecret: *nodeSecret, NodeID: *nodeID,
			NodeTTL: *nodeTTL, DrainTimeout: *drainTimeout, FleetOwnership: ownership,
			Limits:              lim,
			AllowFaultInjection: *allowFaults,
			Kube:                kube,
		}, nil
	}
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	build := serveFlags(fs)
	if help, err := parseFlags(fs, args, getenv, stdout, "usage: anylift serve [flags]", serveGroups); help || err != nil {
		return err
	}
	cfg, err := build(stderr)
	if err != nil {
		return err
	}
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "anylift listening on %s\n", srv.URL())
	if addr := srv.TLSAddr(); addr != "" {
		fmt.Fprintf(stdout, "process endpoint over TLS on wss://%s\n", addr)
	}
	if addr := srv.PlayerAddr(); addr != "" {
		fmt.Fprintf(stdout, "player gateway on http://%s\n", addr)
	}
	if addr := srv.NodeAddr(); addr != "" {
		fmt.Fprintf(stdout, "node listener on %s\n", addr)
	}
	fmt.Fprintf(stdout, "console at %s/console/, Prometheus metrics at %s/metrics\n", srv.URL(), srv.URL())
	<-ctx.Done()
	cfg.Log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Close(shutdown)
}

// flagSet reports whether the flag name was given (on the command line, in
// the environment or in the config file).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
