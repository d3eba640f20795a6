// Package kubetest runs a real Kubernetes API server for tests: etcd and
// kube-apiserver, as scripts/k8s-test-bins.sh builds them, started by
// controller-runtime's envtest on loopback ports picked at random. No
// kubelet, scheduler or controller manager runs: pods stay Pending unless
// the test binds them and reports their status itself.
//
// The binaries are found through KUBEBUILDER_ASSETS:
//
//	export KUBEBUILDER_ASSETS=$(scripts/k8s-test-bins.sh)
//
// Without them a test skips, saying so, except under CI=true, where it
// fails, unless ANYLIFT_K8S_SKIP says why CI could not build them (.ci/run
// sets it when the build fails or runs out of time).
package kubetest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func init() {
	// controller-runtime complains, with a stack trace, when something
	// logs before a logger is set; the tests want none of its logs.
	ctrllog.SetLogger(logr.Discard())
}

// Assets returns the directory holding etcd and kube-apiserver, or skips
// (fails under CI=true) the test when there is none.
func Assets(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	missing := "KUBEBUILDER_ASSETS is not set"
	if dir != "" {
		missing = ""
		for _, bin := range []string{"etcd", "kube-apiserver"} {
			if fi, err := os.Stat(filepath.Join(dir, bin)); err != nil || fi.Mode()&0o111 == 0 {
				missing = "KUBEBUILDER_ASSETS=" + dir + " holds no executable " + bin
				break
			}
		}
	}
	if missing == "" {
		return dir
	}
	if why := os.Getenv("ANYLIFT_K8S_SKIP"); why != "" {
		t.Skipf("no Kubernetes test binaries (%s): %s", missing, why)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but there are no Kubernetes test binaries (%s): run export KUBEBUILDER_ASSETS=$(scripts/k8s-test-bins.sh)", missing)
	}
	t.Skipf("no Kubernetes test binaries (%s): export KUBEBUILDER_ASSETS=$(scripts/k8s-test-bins.sh) to run this test", missing)
	return ""
}

// Cluster is a running API server and an administrator's client of it.
type Cluster struct {
	Config *rest.Config
	Client kubernetes.Interface
	// Kubeconfig is a kubeconfig file for the administrator.
	Kubeconfig string

	auditLog string
}

// Option changes how Start runs the API server.
type Option func(t testing.TB, env *envtest.Environment, c *Cluster)

// Audited has the API server write every request it answers to an audit
// log, which Cluster.Audit reads.
func Audited() Option {
	return func(t testing.TB, env *envtest.Environment, c *Cluster) {
		dir := t.TempDir()
		policy := filepath.Join(dir, "audit-policy.yaml")
		const text = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
		if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c.auditLog = filepath.Join(dir, "audit.log")
		args := env.ControlPlane.GetAPIServer().Configure()
		args.Set("audit-policy-file", policy)
		args.Set("audit-log-path", c.auditLog)
		args.Set("audit-log-format", "json")
		args.Set("audit-log-mode", "blocking")
	}
}

// AdmissionPlugins enables admission plugins beyond the API server's
// default ones.
func AdmissionPlugins(names ...string) Option {
	return func(t testing.TB, env *envtest.Environment, c *Cluster) {
		env.ControlPlane.GetAPIServer().Configure().Set("enable-admission-plugins", strings.Join(names, ","))
	}
}

// Start starts etcd and kube-apiserver for t and stops them at cleanup.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	env := &envtest.Environment{
		BinaryAssetsDirectory:    Assets(t),
		ControlPlaneStartTimeout: 2 * time.Minute, // a loaded 2-core machine
	}
	c := &Cluster{}
	for _, o := range opts {
		o(t, env, c)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting etcd and kube-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping etcd and kube-apiserver: %v", err)
		}
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Config, c.Client, c.Kubeconfig = cfg, cs, kubeconfig
	return c
}

// AuditEvent is a request the API server answered, as its audit log
// records it.
type AuditEvent struct {
	User        string
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	// RequestURI is the request's path and query.
	RequestURI string
}

// Audit returns the requests answered so far (the cluster must have been
// started Audited). A watch counts once, when its answer starts (or when
// it is refused).
func (c *Cluster) Audit(t testing.TB) []AuditEvent {
	t.Helper()
	if c.auditLog == "" {
		t.Fatal("kubetest: the cluster was not started Audited")
	}
	f, err := os.Open(c.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Stage      string
			Verb       string
			RequestURI string
			User       struct{ Username string }
			// ImpersonatedUser is who a request acted as, when it did.
			ImpersonatedUser *struct{ Username string }
			ObjectRef        *struct {
				Resource, Namespace, Name, APIGroup, Subresource string
			}
			ResponseStatus *struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if e.Stage == "ResponseComplete" && e.Verb == "watch" && e.ResponseStatus != nil && e.ResponseStatus.Code < 400 {
			continue // counted when it started
		}
		a := AuditEvent{User: e.User.Username, Verb: e.Verb, RequestURI: e.RequestURI}
		if e.ImpersonatedUser != nil {
			a.User = e.ImpersonatedUser.Username
		}
		if r := e.ObjectRef; r != nil {
			a.APIGroup, a.Resource, a.Subresource, a.Namespace, a.Name = r.APIGroup, r.Resource, r.Subresource, r.Namespace, r.Name
		}
		if e.ResponseStatus != nil {
			a.Code = e.ResponseStatus.Code
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Namespace creates a namespace of its own for t, with the "default"
// service account that pods need (no controller manager makes it), and
// returns its name. Namespaces are not removed: without a controller
// manager their deletion never completes, and the cluster dies with t.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
