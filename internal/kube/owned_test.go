package kube_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8swatch "k8s.io/apimachinery/pkg/watch"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/owners"
	"github.com/anylift/anylift/internal/store"
)

// TestControllersOwnFleets: two controllers on one namespace, each given
// its node's view of fleet ownership (RunOwned). Only the node owning the
// fleet makes its pods; when the lease moves, the new owner adopts them
// and goes on from there, making none twice; while ownership is not in
// force, the node holding the Lease alone acts. (Without a kubelet the
// pods stay Pending and count as the groups wanted.) The store's fence,
// which refuses the other node's writes, is tested with two real nodes on
// PostgreSQL in internal/multinode.
func TestControllersOwnFleets(t *testing.T) {
	cluster := kubetest.Start(t)
	ns := cluster.Namespace(t)
	env := apitest.Start(t)
	w := &world{t: t, cluster: cluster, ns: ns, api: env, gl: env.Client()}
	fleet := w.chatFleet(freePort(t))
	w.capacity(fleet, 0, 10)

	nodes := []*store.Node{{ID: "node-a", Alive: true, OwnsFleets: true}, {ID: "node-b", Alive: true, OwnsFleets: true}}
	views := map[string]*owners.Map{"node-a": owners.New("node-a"), "node-b": owners.New("node-b")}
	lease := func(holder string, epoch int64, on bool) {
		for _, m := range views {
			m.Refresh([]store.FleetOwner{{FleetID: fleet, NodeID: holder, Epoch: epoch}}, nodes, on)
		}
	}
	lease("node-a", 1, true)
	ctx, cancel := context.WithCancel(context.Background())
	// Every pod made, as the API server tells a watch.
	watch, err := cluster.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	made := map[string]bool{}
	go func() {
		for ev := range watch.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == k8swatch.Added {
				mu.Lock()
				made[p.Name] = true
				mu.Unlock()
			}
		}
	}()
	defer watch.Stop()
	var done []chan error
	for id, m := range views {
		ctl := kube.New(kube.Config{Client: cluster.Client, Namespace: ns, Service: env.Server.Containers(),
			SDKEndpoint: env.Server.SDKEndpoint(), Interval: 50 * time.Millisecond, Owners: m})
		m.OnGain(func(string, int64) { ctl.Kick() })
		ch := make(chan error, 1)
		done = append(done, ch)
		go func() { ch <- ctl.RunOwned(ctx, id) }()
	}
	t.Cleanup(func() {
		cancel()
		for _, ch := range done {
			if err := <-ch; err != nil {
				t.Errorf("controller: %v", err)
			}
		}
	})

	// pods waits for n pods and as many groups, and returns the pods'
	// names; a pod made twice (two controllers acting) would show as
	// one pod too many, which no controller removes at once.
	pods := func(what string, n int) []string {
		t.Helper()
		var names []string
		exectest.Eventually(t, what, 30*time.Second, func() (bool, string) {
			names = names[:0]
			for _, p := range w.pods(fleet) {
				names = append(names, p.Name)
			}
			computes, err := w.gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(fleet)})
			if err != nil {
				return false, err.Error()
			}
			return len(names) == n && len(computes.ComputeList) == n, fmt.Sprintf("%d pods, %d groups", len(names), len(computes.ComputeList))
		})
		sort.Strings(names)
		return names
	}
	w.capacity(fleet, 3, 10)
	first := pods("three groups made by the owner", 3)

	// The lease moves to node b: it adopts the three pods and adds two.
	lease("node-b", 2, true)
	w.capacity(fleet, 5, 10)
	second := pods("five groups, the new owner's", 5)
	for _, name := range first {
		if !contains(second, name) {
			t.Errorf("pod %s of the first owner's is gone (pods now %s)", name, strings.Join(second, " "))
		}
	}

	// Ownership not in force: the node holding the Lease acts, alone.
	lease("node-b", 2, false)
	w.capacity(fleet, 6, 10)
	third := pods("six groups, the Lease holder's", 6)
	for _, name := range second {
		if !contains(third, name) {
			t.Errorf("pod %s is gone (pods now %s)", name, strings.Join(third, " "))
		}
	}
	// The watch tells of each pod after the list above has shown it: wait
	// for it to have told of the six. Events come in the order the pods
	// were made, so a pod made twice before the last of them is counted
	// too.
	var n int
	exectest.Eventually(t, "the watch to tell of the six pods", 30*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		n = len(made)
		for _, name := range third {
			if !made[name] {
				return false, fmt.Sprintf("%d pods told of, not %s", n, name)
			}
		}
		return true, ""
	})
	if n != 6 {
		t.Errorf("%d pods made in all, want 6: 3, then 2 more, then 1", n)
	}
	w.capacity(fleet, 2, 10)
	pods("two groups left", 2)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
