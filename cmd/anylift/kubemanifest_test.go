package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestKubernetesManifestRunsServe: the Deployment of deploy/kubernetes
// runs "anylift serve" with flags and ANYLIFT_* variables that serve
// knows, and they make the configuration the manifests mean: several
// nodes on PostgreSQL advertising their pod's address, owning fleets (by
// default), the controller in the cluster. The command line is the container's as the kubelet gives
// it: $(POD_IP) expanded from the environment, Secrets' values in place,
// the image's own environment beneath (deploy/kubernetes_test.go puts the
// manifests on a real API server).
func TestKubernetesManifestRunsServe(t *testing.T) {
	c := anyliftContainer(t)
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("the container runs %q, want serve", c.Args)
	}
	env := imageEnv(t)
	secrets := map[string]string{"store": "postgres://anylift@db.example:5432/anylift", "node-secret": "0123456789abcdef0123", "postgres-password": "pw"}
	for _, e := range c.Env {
		switch {
		case e.Value != "":
			env[e.Name] = e.Value
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = "10.1.2.3"
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = secrets[e.ValueFrom.SecretKeyRef.Key]
		}
	}
	// Every ANYLIFT_* variable is a flag's: serve ignores the others.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[envName(f.Name)] = true })
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "ANYLIFT_") && !names[e.Name] {
			t.Errorf("%s is no flag of anylift serve", e.Name)
		}
	}
	// As the kubelet expands $(VAR) in a container's arguments.
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var args []string
	for _, a := range c.Args[1:] {
		args = append(args, ref.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] }))
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || fs.Lookup(name) == nil {
			t.Errorf("%q is no flag of anylift serve", a)
		}
	}
	cfg, err := configFrom(t, args, env)
	if err != nil {
		t.Fatalf("anylift serve %s: %v", strings.Join(args, " "), err)
	}
	if cfg.Store != secrets["store"] || cfg.NodeSecret != secrets["node-secret"] || cfg.NodeListen != "0.0.0.0:9880" ||
		cfg.NodeAdvertise != "10.1.2.3:9880" || cfg.Listen != "0.0.0.0:9870" || cfg.CredentialsFile != "/etc/anylift/credentials" {
		t.Errorf("store %q, node secret %q, node listen %q advertise %q, listen %q, credentials %q", cfg.Store, cfg.NodeSecret,
			cfg.NodeListen, cfg.NodeAdvertise, cfg.Listen, cfg.CredentialsFile)
	}
	if !cfg.OwnsFleets() {
		t.Errorf("the nodes do not own fleets (--fleet-ownership: %v)", cfg.FleetOwnership)
	}
	if k := cfg.Kube; k == nil || k.Kubeconfig != "" || k.Namespace != "anylift-fleets" || k.SDKEndpoint != "ws://anylift.anylift.svc:9870" {
		t.Errorf("container fleets: %+v, want in cluster, in anylift-fleets", k)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.MountPath == filepath.Dir(cfg.CredentialsFile) && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("nothing is mounted where --credentials-file=%s is", cfg.CredentialsFile)
	}
}

// anyliftContainer is the container of the Deployment in deploy/kubernetes.
func anyliftContainer(t *testing.T) corev1.Container {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var found []corev1.Container
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := k8syaml.NewYAMLOrJSONDecoder(r, 4096)
		for {
			var d appsv1.Deployment
			if err := dec.Decode(&d); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if d.Kind == "Deployment" {
				found = append(found, d.Spec.Template.Spec.Containers...)
			}
		}
		r.Close()
	}
	if len(found) != 1 {
		t.Fatalf("%d containers in Deployments, want anylift's alone", len(found))
	}
	return found[0]
}

// imageEnv is the ANYLIFT_* environment the image sets (ENV in the
// Containerfile).
func imageEnv(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "ENV" {
			continue
		}
		for _, kv := range fields[1:] {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "ANYLIFT_") {
				env[k] = v
			}
		}
	}
	if env["ANYLIFT_LISTEN"] == "" {
		t.Fatalf("the Containerfile sets no ANYLIFT_LISTEN: %v", env)
	}
	return env
}
