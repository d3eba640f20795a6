package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	gltypes "github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/storetestenv"
)

// manifests are the objects of deploy/kubernetes, file by file in name
// order (as kubectl apply -f takes a directory), document by document.
func manifests(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := k8syaml.NewYAMLOrJSONDecoder(r, 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj == nil {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
		r.Close()
	}
	return out
}

// typed is the one object of kind and name among objs, as a T.
func typed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			var v T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &v, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return &v
		}
	}
	t.Fatalf("no %s %s in deploy/kubernetes", kind, name)
	return nil
}

// The Deployment's flags that the manifests' parts must agree on.
type serveArgs map[string]string

func argsOf(t *testing.T, c corev1.Container) serveArgs {
	t.Helper()
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("the container runs %q, want anylift serve", c.Args)
	}
	out := serveArgs{}
	for _, a := range c.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		out[name] = value
	}
	return out
}

// TestKubernetesManifestsAgree: what the manifests name in each other is
// there: the Service and the budget select the Deployment's pods, the
// Service's ports are the container's, the endpoints game servers are
// told name the Service, the controller's namespace is where its rights
// are, and its rights are those of its service account. (cmd/anylift's
// tests check that the flags are anylift serve's.)
func TestKubernetesManifestsAgree(t *testing.T) {
	objs := manifests(t)
	d := typed[appsv1.Deployment](t, objs, "Deployment", "anylift")
	svc := typed[corev1.Service](t, objs, "Service", "anylift")
	pdb := typed[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget", "anylift")
	sa := typed[corev1.ServiceAccount](t, objs, "ServiceAccount", "anylift")
	binding := typed[rbacv1.RoleBinding](t, objs, "RoleBinding", "anylift-container-fleets")
	role := typed[rbacv1.Role](t, objs, "Role", "anylift-container-fleets")

	pod := d.Spec.Template
	for what, sel := range map[string]map[string]string{"Service": svc.Spec.Selector, "PodDisruptionBudget": pdb.Spec.Selector.MatchLabels,
		"Deployment": d.Spec.Selector.MatchLabels} {
		for k, v := range sel {
			if pod.Labels[k] != v {
				t.Errorf("the %s selects %s=%s, which the pods do not have (%v)", what, k, v, pod.Labels)
			}
		}
	}
	if *d.Spec.Replicas < 2 || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("%d replicas, budget %v: want several nodes, one away at a time", *d.Spec.Replicas, pdb.Spec.MaxUnavailable)
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	svcPorts := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Port] = true
		if p.TargetPort.Type != intstr.String || ports[p.TargetPort.StrVal] != p.Port {
			t.Errorf("Service port %s targets %v, not the container's port %d", p.Name, p.TargetPort, p.Port)
		}
	}
	args := argsOf(t, c)
	for _, flag := range []string{"sdk-endpoint", "kube-sdk-endpoint"} {
		u, err := url.Parse(args[flag])
		if err != nil || u.Scheme != "ws" || u.Hostname() != svc.Name+"."+svc.Namespace+".svc" || !svcPorts[int32(atoi(u.Port()))] {
			t.Errorf("--%s=%s does not name the Service %s.%s.svc and one of its ports", flag, args[flag], svc.Name, svc.Namespace)
		}
	}
	if args["node-advertise"] != "$(POD_IP):9880" || args["node-listen"] != "0.0.0.0:9880" || ports["node"] != 9880 {
		t.Errorf("nodes reach each other at --node-advertise=%s, --node-listen=%s, port %d", args["node-advertise"], args["node-listen"], ports["node"])
	}
	podIP := false
	for _, e := range c.Env {
		podIP = podIP || (e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP")
	}
	if !podIP {
		t.Error("POD_IP is not the pod's address from the downward API")
	}
	if _, ok := args["kube-in-cluster"]; !ok || args["kube-namespace"] != role.Namespace || binding.Namespace != role.Namespace {
		t.Errorf("the controller runs in %q (in cluster: %v), its rights are in %q", args["kube-namespace"], ok, role.Namespace)
	}
	if pod.Spec.ServiceAccountName != sa.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != sa.Name ||
		binding.Subjects[0].Namespace != sa.Namespace || binding.RoleRef.Name != role.Name || binding.RoleRef.Kind != "Role" {
		t.Errorf("the pods run as %s, the Role %s is bound to %+v", pod.Spec.ServiceAccountName, binding.RoleRef.Name, binding.Subjects)
	}
	// The node watch, and the cluster-wide rights it needs, go together.
	nodesRole := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "anylift-nodes")
	nodesBinding := typed[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "anylift-nodes")
	if _, ok := args["kube-watch-nodes"]; !ok || !allowedBy(nodesRole.Rules, kubetest.AuditEvent{Resource: "nodes", Verb: "watch"}) ||
		!allowedBy(nodesRole.Rules, kubetest.AuditEvent{Resource: "nodes", Verb: "list"}) {
		t.Errorf("--kube-watch-nodes given: %v; the ClusterRole %s gives %+v, want list and watch on nodes", ok, nodesRole.Name, nodesRole.Rules)
	}
	if len(nodesBinding.Subjects) != 1 || nodesBinding.Subjects[0].Name != sa.Name || nodesBinding.Subjects[0].Namespace != sa.Namespace ||
		nodesBinding.RoleRef.Name != nodesRole.Name || nodesBinding.RoleRef.Kind != "ClusterRole" {
		t.Errorf("the ClusterRole %s is bound to %+v through %+v, want the pods' service account %s", nodesRole.Name, nodesBinding.Subjects, nodesBinding.RoleRef, sa.Name)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want /readyz", c.ReadinessProbe)
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscanf(s, "%d", &n)
	return n
}

// The service account the nodes run as.
const serviceAccount = "system:serviceaccount:anylift:anylift"

// TestKubernetesManifestsOnAPIServer applies every manifest to a real API
// server as "kubectl apply --server-side" does, with strict field
// validation, and creates a pod from the Deployment's template as its
// ReplicaSet would, in a namespace that enforces the restricted Pod
// Security Standard. Then it runs Anylift's controller as the nodes run it
// (anylift serve given the cluster; on PostgreSQL with a node listener,
// owning its fleets, when the tests have PostgreSQL), authenticated with a token of the
// manifests' service account, through a container fleet's life: every
// call it makes is allowed, every right the Role and the ClusterRole give is used, and what
// lies outside them is refused. The API server enforces owner reference
// permissions, as some distributions do.
func TestKubernetesManifestsOnAPIServer(t *testing.T) {
	cluster := kubetest.Start(t, kubetest.Audited(), kubetest.AdmissionPlugins("OwnerReferencesPermissionEnforcement"))
	ctx := context.Background()
	cs := cluster.Client
	objs := manifests(t)

	// Applied, in order.
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				t.Errorf("%s %s names no namespace", gvk.Kind, o.GetName())
			}
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		data, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "anylift-manifests-test", FieldValidation: "Strict"}); err != nil {
			t.Fatalf("applying %s %s: %v", gvk.Kind, o.GetName(), err)
		}
	}

	// The Secrets, as docs/kubernetes.md has them made.
	d := typed[appsv1.Deployment](t, objs, "Deployment", "anylift")
	for name, data := range map[string]map[string]string{
		"anylift":      {"store": "postgres://anylift@db.example:5432/anylift", "postgres-password": "pw", "node-secret": "0123456789abcdef0123"},
		"anylift-keys": {"credentials": "AKIDEXAMPLE secret\n"},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace}, StringData: data}
		if _, err := cs.CoreV1().Secrets(d.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Every Secret and key the pods read is one of those (optional ones
	// aside).
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil && !ptr.Deref(ref.SecretKeyRef.Optional, false) {
			s, err := cs.CoreV1().Secrets(d.Namespace).Get(ctx, ref.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil || s.Data[ref.SecretKeyRef.Key] == nil {
				t.Errorf("%s from Secret %s key %s: %v", e.Name, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key, err)
			}
		}
	}

	// A pod of the Deployment, as its ReplicaSet would make it: admitted
	// under the restricted standard.
	tmpl := d.Spec.Template
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: tmpl.Labels}, Spec: tmpl.Spec}
	if _, err := cs.CoreV1().Pods(d.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pod of the Deployment: %v", err)
	}
	// Its probes ask what a node answers 200 while it serves.
	env := apitest.Start(t)
	for _, p := range []*corev1.Probe{tmpl.Spec.Containers[0].ReadinessProbe, tmpl.Spec.Containers[0].LivenessProbe, tmpl.Spec.Containers[0].StartupProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("probe %+v: want an HTTP probe", p)
			continue
		}
		resp, err := http.Get(env.URL + p.HTTPGet.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("probe %s: %s", p.HTTPGet.Path, resp.Status)
		}
	}

	// The controller, as a node runs it, with the service account's token.
	role := typed[rbacv1.Role](t, objs, "Role", "anylift-container-fleets")
	nodesRole := typed[rbacv1.ClusterRole](t, objs, "ClusterRole", "anylift-nodes")
	ns := role.Namespace
	_, watchNodes := argsOf(t, d.Spec.Template.Spec.Containers[0])["kube-watch-nodes"]
	tok, err := cs.CoreV1().ServiceAccounts("anylift").CreateToken(ctx, "anylift", &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	kc.AuthInfos["anylift"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "anylift", Namespace: ns}
	kc.CurrentContext = "test"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// As the manifests run it: on PostgreSQL with a node listener, which
	// makes the node own its fleets (the default), when the tests have
	// PostgreSQL; on SQLite otherwise.
	opts := []apitest.Option{func(c *server.Config) { c.Kube = &server.KubeConfig{Kubeconfig: kubeconfig, WatchNodes: watchNodes} }}
	if dsn := storetestenv.PostgresDSN(t); dsn != "" {
		opts = append(opts, apitest.WithPostgres(storetestenv.FreshSchema(t, dsn)), func(c *server.Config) {
			c.NodeListen, c.NodeSecret = "127.0.0.1:0", "0123456789abcdef0123"
		})
	}
	node := apitest.Start(t, opts...)
	if node.Config.Store != "" && node.Server.Owners() == nil {
		t.Fatal("a node on PostgreSQL with a node listener, as the manifests run it, does not own fleets")
	}
	gl := node.Client()
	fleet := containerFleet(t, gl)
	pods := func() int {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	// A wait that fails goes on to the audit below, which says what the
	// controller was refused.
	waitFor := func(what string, ok func() bool) bool {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Errorf("waited 30 s for %s", what)
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}
	// No kubelet runs: the pods stay Pending, and count as the groups
	// wanted. Up, down (removing idle groups' pods and Secrets), then the
	// fleet's deletion (everything it left, its ConfigMap last).
	lived := true
	for _, n := range []int32{3, 1} {
		if _, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
			DesiredInstances: aws.Int32(n), MinSize: aws.Int32(0), MaxSize: aws.Int32(3)}); err != nil {
			t.Fatal(err)
		}
		lived = lived && waitFor(fmt.Sprintf("%d pods", n), func() bool { return pods() == int(n) })
	}
	if _, err := gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: aws.String(fleet)}); err != nil {
		t.Fatal(err)
	}
	lived = lived && waitFor("the fleet's objects to go", func() bool {
		secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
		if err != nil {
			t.Fatal(err)
		}
		_, cmErr := cs.CoreV1().ConfigMaps(ns).Get(ctx, fleet, metav1.GetOptions{})
		return pods() == 0 && len(secrets.Items) == 0 && apierrors.IsNotFound(cmErr)
	})
	// The Lease renewed at least once (every 2 s).
	lived = lived && waitFor("the Lease renewed", func() bool {
		for _, e := range cluster.Audit(t) {
			if e.User == serviceAccount && e.Resource == "leases" && e.Verb == "update" {
				return true
			}
		}
		return false
	})

	// Every call allowed; every right used, and by no call outside them.
	type right struct{ group, resource, verb string }
	used := map[right]bool{}
	for _, e := range cluster.Audit(t) {
		if e.User != serviceAccount {
			continue
		}
		if e.Code == http.StatusForbidden || e.Code == http.StatusUnauthorized {
			t.Errorf("the controller was refused: %+v", e)
			continue
		}
		// Its namespace's objects, or the cluster's nodes.
		rules := role.Rules
		if e.Namespace == "" && e.Resource == "nodes" {
			rules = nodesRole.Rules
		} else if e.Namespace != ns {
			t.Errorf("the controller asked outside its namespace's objects: %+v", e)
		}
		if e.Subresource != "" {
			t.Errorf("the controller asked for a subresource: %+v", e)
		}
		used[right{e.APIGroup, e.Resource, e.Verb}] = true
		// An informer lists through a watch that starts with the objects
		// there (sendInitialEvents) where the API server streams lists,
		// as this one does, and through a list where it does not: such a
		// watch is the list the Role must allow.
		if e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true") {
			used[right{e.APIGroup, e.Resource, "list"}] = true
		}
		if !allowedBy(rules, e) {
			t.Errorf("a call no rule names was allowed: %+v", e)
		}
	}
	if !lived {
		t.FailNow() // what went unused is no news
	}
	for _, r := range slices.Concat(role.Rules, nodesRole.Rules) {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !used[right{g, res, v}] {
						t.Errorf("the manifests give %s %s/%s, which the controller never used (used: %v)", v, g, res, used)
					}
				}
			}
		}
	}

	// What lies outside: refused.
	sa, err := kubernetes.NewForConfig(saConfig(cluster, tok.Status.Token))
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]error{}
	_, refused["get a node"] = sa.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
	refused["cordon a node"] = func() error {
		_, err := sa.CoreV1().Nodes().Patch(ctx, "n", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
		return err
	}()
	_, refused["list namespaces"] = sa.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	_, refused["list pods in every namespace"] = sa.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	_, refused["list pods in anylift"] = sa.CoreV1().Pods("anylift").List(ctx, metav1.ListOptions{})
	_, refused["read Anylift's own Secret"] = sa.CoreV1().Secrets("anylift").Get(ctx, "anylift", metav1.GetOptions{})
	refused["delete the Deployment"] = sa.AppsV1().Deployments("anylift").Delete(ctx, "anylift", metav1.DeleteOptions{})
	_, refused["create a Deployment"] = sa.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, Template: tmpl}}, metav1.CreateOptions{})
	_, refused["get a pod"] = sa.CoreV1().Pods(ns).Get(ctx, "x", metav1.GetOptions{})
	_, refused["get a Secret"] = sa.CoreV1().Secrets(ns).Get(ctx, "x", metav1.GetOptions{})
	_, refused["update a pod's status"] = sa.CoreV1().Pods(ns).UpdateStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.UpdateOptions{})
	refused["bind a pod"] = sa.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n"}}, metav1.CreateOptions{})
	_, refused["get another Lease"] = sa.CoordinationV1().Leases(ns).Get(ctx, "other", metav1.GetOptions{})
	_, refused["update another Lease"] = sa.CoordinationV1().Leases(ns).Update(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.UpdateOptions{})
	_, refused["create an Event"] = sa.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "x", Namespace: ns}}, metav1.CreateOptions{})
	names := make([]string, 0, len(refused))
	for what := range refused {
		names = append(names, what)
	}
	sort.Strings(names)
	for _, what := range names {
		if err := refused[what]; !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}

// allowedBy reports whether a rule of rules allows the request e.
func allowedBy(rules []rbacv1.PolicyRule, e kubetest.AuditEvent) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, e.APIGroup) && slices.Contains(r.Resources, e.Resource) && slices.Contains(r.Verbs, e.Verb) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, e.Name)) {
			return true
		}
	}
	return false
}

// containerFleet makes a container group definition and a fleet running
// it.
func containerFleet(t *testing.T, gl *gamelift.Client) string {
	t.Helper()
	ctx := context.Background()
	if _, err := gl.CreateContainerGroupDefinition(ctx, &gamelift.CreateContainerGroupDefinitionInput{
		Name: aws.String("arena"), OperatingSystem: gltypes.ContainerOperatingSystemAmazonLinux2023,
		TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
		GameServerContainerDefinition: &gltypes.GameServerContainerDefinitionInput{
			ContainerName: aws.String("game"), ImageUri: aws.String("registry.example/arena:1"), ServerSdkVersion: aws.String("5.2.0"),
			PortConfiguration: &gltypes.ContainerPortConfiguration{ContainerPortRanges: []gltypes.ContainerPortRange{
				{FromPort: aws.Int32(7777), ToPort: aws.Int32(7777), Protocol: gltypes.IpProtocolUdp}}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	out, err := gl.CreateContainerFleet(ctx, &gamelift.CreateContainerFleetInput{
		FleetRoleArn: aws.String("arn:aws:iam::123456789012:role/arena"), GameServerContainerGroupDefinitionName: aws.String("arena")})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ContainerFleet.FleetId)
}

// saConfig is a client configuration for cluster authenticated with token.
func saConfig(cluster *kubetest.Cluster, token string) *rest.Config {
	return &rest.Config{Host: cluster.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cluster.Config.CAData}}
}
