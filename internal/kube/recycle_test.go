package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
)

// TestNodeRecycled: with WatchNodes, the groups on a node taken out of
// service ahead of time (cordoned, as kubectl drain does first; an
// autoscaler's taint) are recycled as GameLift recycles an instance at
// risk of interruption: INSTANCE_RECYCLED for each instance, once; an idle
// group is replaced on another node at once; a busy one keeps its game
// session until it ends, takes no other, and is then replaced, even when
// its node was put back in service meanwhile.
func TestNodeRecycled(t *testing.T) {
	cluster := kubetest.Start(t)
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) { nodeRecycled(t, cluster, opts) })
	}
}

func nodeRecycled(t *testing.T, cluster *kubetest.Cluster, opts []apitest.Option) {
	w := newWorldWith(t, cluster, func(c *kube.Config) { c.WatchNodes = true }, opts...)
	ctx := context.Background()
	cs := cluster.Client
	fleet := w.chatFleet(freePort(t))
	w.capacity(fleet, 2, 2)
	w.groups(fleet, 0, 2)
	gs := createSession(t, w.gl, fleet)
	id := gs.GameSessionId
	var busy string
	exectest.Eventually(t, "the session to be ACTIVE", 30*time.Second, func() (bool, string) {
		d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		if err != nil {
			return false, err.Error()
		}
		busy = aws.ToString(d.GameSessions[0].ComputeName)
		return d.GameSessions[0].Status == types.GameSessionStatusActive, string(d.GameSessions[0].Status)
	})
	w.groups(fleet, 1, 1)
	before := map[string]corev1.Pod{} // by instance
	for _, p := range w.livePods(fleet) {
		before[p.Labels[kube.LabelInstance]] = p
	}

	// Both nodes are taken out of service: the idle group's cordoned, the
	// busy one's marked by the cluster autoscaler.
	var busyNode, idleNode string
	for _, p := range before {
		if p.Name == busy {
			busyNode = p.Spec.NodeName
		} else {
			idleNode = p.Spec.NodeName
		}
	}
	autoscaled := func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "ToBeDeletedByClusterAutoscaler", Value: "1795000000", Effect: corev1.TaintEffectNoSchedule})
	}
	for node, change := range map[string]func(*corev1.Node){idleNode: func(n *corev1.Node) { n.Spec.Unschedulable = true }, busyNode: autoscaled} {
		w.kubelet.moveOff(node)
		updateNode(t, cs, node, change)
		t.Cleanup(func() { // nodes outlive the test's world
			updateNode(t, cs, node, func(n *corev1.Node) { n.Spec.Unschedulable, n.Spec.Taints = false, nil })
		})
	}

	// The idle group is replaced on another node; the busy one stays.
	exectest.Eventually(t, "the idle group replaced elsewhere", 60*time.Second, func() (bool, string) {
		var seen []string
		moved := 0
		for _, p := range w.livePods(fleet) {
			seen = append(seen, p.Name+"@"+p.Spec.NodeName)
			if p.Name != busy && before[p.Labels[kube.LabelInstance]].Name != p.Name && p.Status.Phase == corev1.PodRunning {
				moved++
			}
		}
		return moved == 1 && w.podLive(fleet, busy), strings.Join(seen, " ")
	})
	w.groups(fleet, 1, 1)
	w.session(aws.ToString(id), types.GameSessionStatusActive, "")

	// The autoscaler gives up on the busy group's node; the group, once
	// recycled, still goes when its session has ended, and is replaced.
	updateNode(t, cs, busyNode, func(n *corev1.Node) { n.Spec.Taints = nil })
	if _, err := w.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: id,
		TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
		t.Fatal(err)
	}
	exectest.Eventually(t, "both groups on other nodes", 60*time.Second, func() (bool, string) {
		var seen []string
		moved := 0
		for _, p := range w.livePods(fleet) {
			seen = append(seen, p.Name+"@"+p.Spec.NodeName)
			if old := before[p.Labels[kube.LabelInstance]]; old.Name != p.Name && old.Spec.NodeName != p.Spec.NodeName {
				moved++
			}
		}
		return moved == 2 && len(seen) == 2, strings.Join(seen, " ")
	})
	w.groups(fleet, 0, 2)

	// One INSTANCE_RECYCLED per instance, naming the group and its node.
	events := fleetEvents(t, w.gl, fleet)
	recycled := events[types.EventCodeInstanceRecycled]
	for instance, p := range before {
		got := recycled[fleet+"-"+instance]
		if len(got) != 1 || !strings.Contains(got[0], p.Name) || !strings.Contains(got[0], p.Spec.NodeName) {
			t.Errorf("INSTANCE_RECYCLED for instance %s: %q, want one naming %s and %s", instance, got, p.Name, p.Spec.NodeName)
		}
	}
	if len(recycled) != 2 {
		t.Errorf("INSTANCE_RECYCLED: %v, want one for each of the two instances", recycled)
	}
	for _, code := range []types.EventCode{types.EventCodeInstanceInterrupted, types.EventCodeInstanceReplacedUnhealthy, types.EventCodeGameServerContainerGroupCrashed} {
		if len(events[code]) != 0 {
			t.Errorf("%s: %v, want none", code, events[code])
		}
	}
}

// updateNode changes a node.
func updateNode(t *testing.T, cs kubernetes.Interface, name string, change func(*corev1.Node)) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(n)
	if _, err := cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
