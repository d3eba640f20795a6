package kube_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
)

// TestControllerNodeFailures: pods the cluster takes away become the fleet
// events GameLift records, their groups are deregistered (sessions end)
// and replaced. The test plays the cluster's parts: the node lifecycle
// controller and taint manager for a node that stops answering, the pod
// garbage collector for a node removed, the kubelet for a node shutting
// down or short of memory; a drain goes through the API server's own
// eviction subresource.
func TestControllerNodeFailures(t *testing.T) {
	cluster := kubetest.Start(t)
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) { nodeFailures(t, cluster, opts) })
	}
}

func nodeFailures(t *testing.T, cluster *kubetest.Cluster, opts []apitest.Option) {
	w := newWorld(t, cluster, opts...)
	ctx := context.Background()
	cs := cluster.Client
	port := freePort(t)
	fleet := w.chatFleet(port)
	const n = 5
	w.capacity(fleet, n, n)
	w.groups(fleet, 0, n)

	// A game session, on the first group the cluster takes away.
	gs, err := w.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	sessionID := gs.GameSession.GameSessionId
	var busy string // the group hosting it
	exectest.Eventually(t, "the session to be ACTIVE", 30*time.Second, func() (bool, string) {
		d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: sessionID})
		if err != nil {
			return false, err.Error()
		}
		busy = aws.ToString(d.GameSessions[0].ComputeName)
		return d.GameSessions[0].Status == types.GameSessionStatusActive && busy != "", string(d.GameSessions[0].Status) + " on " + busy
	})
	w.groups(fleet, 1, n-1)

	now := metav1.Now()
	disruption := func(reason, message string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now}
	}
	updateStatus := func(t *testing.T, p *corev1.Pod, change func(*corev1.PodStatus)) {
		t.Helper()
		cur, err := cs.CoreV1().Pods(w.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(&cur.Status)
		if _, err := cs.CoreV1().Pods(w.ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		code types.EventCode
		// byInstance: the event names the instance, else the group.
		byInstance bool
		// stays: the pod stays, being deleted (its node cannot confirm).
		stays   bool
		disrupt func(t *testing.T, p *corev1.Pod)
	}{
		{"node unreachable", types.EventCodeInstanceReplacedUnhealthy, true, true, func(t *testing.T, p *corev1.Pod) {
			// The node stops answering; the node lifecycle controller
			// marks it and taints it, and the taint manager deletes its
			// pods once their toleration (300 s by default) runs out.
			w.kubelet.lose(p.Spec.NodeName)
			node, err := cs.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// (Nodes outlive a test's world: another may have lost it.)
			node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
			node.Spec.Taints = append(node.Spec.Taints,
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
			if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			updateStatus(t, p, func(s *corev1.PodStatus) {
				for i := range s.Conditions {
					if s.Conditions[i].Type == corev1.PodReady {
						s.Conditions[i].Status = corev1.ConditionFalse
					}
				}
				s.Conditions = append(s.Conditions, disruption("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"))
			})
			if err := cs.CoreV1().Pods(w.ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"node removed", types.EventCodeInstanceReplacedUnhealthy, true, false, func(t *testing.T, p *corev1.Pod) {
			// The node is deleted; the pod garbage collector fails its
			// pods and removes them at once.
			w.kubelet.lose(p.Spec.NodeName)
			if err := cs.CoreV1().Nodes().Delete(ctx, p.Spec.NodeName, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			updateStatus(t, p, func(s *corev1.PodStatus) {
				s.Phase = corev1.PodFailed
				s.Conditions = append(s.Conditions, disruption("DeletionByPodGC", "PodGC: node no longer exists"))
			})
			if err := cs.CoreV1().Pods(w.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"node shutting down", types.EventCodeInstanceInterrupted, true, false, func(t *testing.T, p *corev1.Pod) {
			// The kubelet's graceful node shutdown.
			const msg = "Pod was terminated in response to imminent node shutdown."
			updateStatus(t, p, func(s *corev1.PodStatus) {
				s.Phase, s.Reason, s.Message = corev1.PodFailed, "Terminated", msg
				s.Conditions = append(s.Conditions, disruption(corev1.PodReasonTerminationByKubelet, msg))
			})
		}},
		{"node drained", types.EventCodeInstanceInterrupted, true, false, func(t *testing.T, p *corev1.Pod) {
			// kubectl drain: the API server's eviction subresource marks
			// the pod and deletes it; the kubelet stops it.
			if err := cs.CoreV1().Pods(w.ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: w.ns}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"node short of memory", types.EventCodeGameServerContainerGroupReplacedUnhealthy, false, false, func(t *testing.T, p *corev1.Pod) {
			// The kubelet's node-pressure eviction.
			const msg = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi."
			updateStatus(t, p, func(s *corev1.PodStatus) {
				s.Phase, s.Reason, s.Message = corev1.PodFailed, "Evicted", msg
				s.Conditions = append(s.Conditions, disruption(corev1.PodReasonTerminationByKubelet, msg))
			})
		}},
	}

	// The busy group first, then one group of each other instance.
	byInstance := map[string]corev1.Pod{}
	var order []string
	for _, p := range w.livePods(fleet) {
		byInstance[p.Labels[kube.LabelInstance]] = p
		if p.Name == busy {
			order = append([]string{p.Labels[kube.LabelInstance]}, order...)
		} else {
			order = append(order, p.Labels[kube.LabelInstance])
		}
	}
	if len(order) != n || byInstance[order[0]].Name != busy {
		t.Fatalf("instances %v, the session on %s", order, busy)
	}
	for i, tc := range cases {
		instance := order[i]
		victim := byInstance[instance]
		t.Run(tc.name, func(t *testing.T) {
			tc.disrupt(t, &victim)
			resource := victim.Name
			if tc.byInstance {
				resource = fleet + "-" + instance
			}
			// Replaced: a new pod of the same instance runs, and the fleet
			// is whole again (its groups idle: the session has ended).
			exectest.Eventually(t, "a replacement on instance "+instance, 60*time.Second, func() (bool, string) {
				var seen []string
				replaced := false
				for _, p := range w.livePods(fleet) {
					seen = append(seen, p.Name)
					replaced = replaced || (p.Name != victim.Name && p.Labels[kube.LabelInstance] == instance && p.Status.Phase == corev1.PodRunning)
				}
				return replaced, strings.Join(seen, " ")
			})
			w.groups(fleet, 0, n)
			if _, err := w.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(victim.Name)}); err == nil {
				t.Errorf("the group %s taken away is still a compute", victim.Name)
			}
			_, err := cs.CoreV1().Pods(w.ns).Get(ctx, victim.Name, metav1.GetOptions{})
			if tc.stays && err != nil {
				t.Errorf("the pod on the lost node: %v, want it there, being deleted", err)
			}
			if _, err := cs.CoreV1().Secrets(w.ns).Get(ctx, victim.Name, metav1.GetOptions{}); err == nil {
				t.Errorf("the Secret of %s is still there", victim.Name)
			}
			events := fleetEvents(t, w.gl, fleet)
			if got := events[tc.code][resource]; len(got) != 1 || !strings.Contains(got[0], victim.Name) || !strings.Contains(got[0], victim.Spec.NodeName) {
				t.Errorf("%s events for %s: %q, want one naming the group and its node; all: %v", tc.code, resource, got, events)
			}
		})
	}

	// Each group taken away has its one event, and nothing crashed.
	total := 0
	for code, byResource := range fleetEvents(t, w.gl, fleet) {
		switch code {
		case types.EventCodeInstanceReplacedUnhealthy, types.EventCodeInstanceInterrupted,
			types.EventCodeGameServerContainerGroupReplacedUnhealthy, types.EventCodeGameServerContainerGroupCrashed:
			for _, msgs := range byResource {
				total += len(msgs)
			}
		}
	}
	if total != len(cases) {
		t.Errorf("%d events of groups taken away or crashed, want %d", total, len(cases))
	}
	// The session on the group whose node stopped answering ended.
	d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.GameSessions[0]; s.Status != types.GameSessionStatusTerminated || s.StatusReason != types.GameSessionStatusReasonInterrupted {
		t.Errorf("the session on the lost node is %s (%s), want TERMINATED (INTERRUPTED)", s.Status, s.StatusReason)
	}
}

// fleetEvents are a fleet's event messages by code and resource.
func fleetEvents(t *testing.T, gl *gamelift.Client, fleet string) map[types.EventCode]map[string][]string {
	t.Helper()
	out := map[types.EventCode]map[string][]string{}
	p := gamelift.NewDescribeFleetEventsPaginator(gl, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			if out[e.EventCode] == nil {
				out[e.EventCode] = map[string][]string{}
			}
			r := aws.ToString(e.ResourceId)
			out[e.EventCode][r] = append(out[e.EventCode][r], aws.ToString(e.Message))
		}
	}
	return out
}
