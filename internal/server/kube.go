package server

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/anylift/anylift/internal/kube"
)

// KubeConfig runs container fleets on a Kubernetes cluster
// (docs/kubernetes.md).
type KubeConfig struct {
	// Kubeconfig names a kubeconfig file; empty: the in-cluster
	// configuration (the pod's service account).
	Kubeconfig string
	// Namespace holds the fleets' pods; empty: the kubeconfig context's
	// namespace, or the pod's own in a cluster, or "default".
	Namespace string
	// SDKEndpoint is the WebSocket URL game servers in the pods reach the
	// process endpoint at; empty: the server's SDK endpoint.
	SDKEndpoint string
	// WatchNodes has the controller watch the cluster's nodes, to recycle
	// the groups of a node taken out of service (kube.Config.WatchNodes).
	WatchNodes bool
}

// inClusterNamespace is where a pod's service account says its namespace
// is.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// kubeClient is a connection to the cluster container fleets run on.
type kubeClient struct {
	cs        kube.Client
	namespace string
	host      string
}

// connectKube reads the cluster's configuration; an unusable one stops
// the server from starting.
func connectKube(kc *KubeConfig) (*kubeClient, error) {
	var rc *rest.Config
	ns := kc.Namespace
	var err error
	if kc.Kubeconfig != "" {
		loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kc.Kubeconfig}, &clientcmd.ConfigOverrides{})
		if rc, err = loader.ClientConfig(); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kc.Kubeconfig, err)
		}
		if ns == "" {
			ns, _, _ = loader.Namespace()
		}
	} else {
		if rc, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("--kube-in-cluster: %w", err)
		}
		if ns == "" {
			if b, err := os.ReadFile(inClusterNamespace); err == nil {
				ns = strings.TrimSpace(string(b))
			}
		}
	}
	if ns == "" {
		ns = "default"
	}
	// Pods are created many at once when a fleet scales up.
	rc.QPS, rc.Burst = 200, 400
	rc.UserAgent = "anylift"
	cs, err := kube.NewClient(rc)
	if err != nil {
		return nil, err
	}
	return &kubeClient{cs: cs, namespace: ns, host: rc.Host}, nil
}

// runKube runs the container fleet controller until the server closes:
// elected among the nodes given the same cluster, or, on a node taking
// part in fleet ownership, on every node for the fleets it owns
// (kube.Controller.RunOwned).
func (s *Server) runKube(ctx context.Context, kc *kubeClient) {
	klog.SetSlogLogger(s.cfg.Log.With("component", "client-go"))
	endpoint := s.cfg.Kube.SDKEndpoint
	if endpoint == "" {
		endpoint = s.SDKEndpoint()
	}
	cfg := kube.Config{Client: kc.cs, Namespace: kc.namespace, Service: s.cs, SDKEndpoint: endpoint,
		WatchNodes: s.cfg.Kube.WatchNodes, Log: s.cfg.Log.With("component", "kube")}
	run := (*kube.Controller).RunElected
	if s.owners != nil {
		cfg.Owners = s.owners
		run = (*kube.Controller).RunOwned
	}
	ctl := kube.New(cfg)
	if s.owners != nil {
		// A fleet this node comes to own (a takeover, a hand-off) is
		// reconciled at once, its pods adopted as they are.
		s.owners.OnGain(func(string, int64) { ctl.Kick() })
	}
	identity := s.svc.Config().NodeID
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := run(ctl, ctx, identity); err != nil {
			s.cfg.Log.Error("container fleet controller", "err", err)
		}
	}()
	s.cfg.Log.Info("running container fleets on Kubernetes", "api_server", kc.host, "namespace", kc.namespace,
		"sdk_endpoint", endpoint, "fleet_ownership", s.owners != nil)
}
