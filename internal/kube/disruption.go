package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/anylift/anylift/internal/wire"
)

// Reasons the cluster's own components give, in a pod's DisruptionTarget
// condition or its status, when they take the pod away (k8s.io/api names
// only two of them).
const (
	reasonTerminationByKubelet   = corev1.PodReasonTerminationByKubelet // node shutdown, node-pressure eviction
	reasonDeletionByTaintManager = "DeletionByTaintManager"             // a NoExecute taint: the node not ready or unreachable
	reasonDeletionByPodGC        = "DeletionByPodGC"                    // the node object is gone
	reasonEvictionByEvictionAPI  = "EvictionByEvictionAPI"              // a drain (kubectl drain, an autoscaler)
	reasonPreemptionByScheduler  = corev1.PodReasonPreemptionByScheduler
	reasonNodeLost               = "NodeLost"     // status reason: a node controller deleted the pods of a node that stopped answering
	reasonEvicted                = "Evicted"      // status reason: the kubelet evicted the pod, its node short of memory or disk
	reasonNodeShutdown           = "Terminated"   // status reason: the node is shutting down (graceful node shutdown)
	reasonNodeShutdownRefused    = "NodeShutdown" // status reason: refused by a node shutting down
	reasonNodeShutdownOld        = "Shutdown"
)

// cause is why the cluster stopped a group's pod or is taking it away, as
// the fleet event GameLift records for such a thing and a sentence. The
// code is "" when the cluster's components said nothing about it (a pod
// deleted by hand, or one that failed of itself).
//
// Anylift reads this from the pod alone, as the node lifecycle controller,
// the taint manager, the pod garbage collector, the eviction API and the
// kubelet write it there: the controller needs no right on nodes.
func cause(p *corev1.Pod) (code, why string) {
	target, message := "", ""
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			target, message = c.Reason, c.Message
		}
	}
	node := p.Spec.NodeName
	if node == "" {
		node = "(none)"
	}
	said := func(reason, msg string) string {
		if msg == "" {
			return reason
		}
		return reason + ": " + msg
	}
	switch {
	case p.Status.Reason == reasonNodeLost:
		return wire.EventCodeInstanceReplacedUnhealthy, fmt.Sprintf("its node %s was lost (%s)", node, said(p.Status.Reason, p.Status.Message))
	case target == reasonDeletionByTaintManager:
		return wire.EventCodeInstanceReplacedUnhealthy, fmt.Sprintf("its node %s is not ready, unreachable or tainted NoExecute (%s)", node, said(target, message))
	case target == reasonDeletionByPodGC:
		return wire.EventCodeInstanceReplacedUnhealthy, fmt.Sprintf("its node %s is gone (%s)", node, said(target, message))
	case p.Status.Reason == reasonEvicted:
		return wire.EventCodeGameServerContainerGroupReplacedUnhealthy, fmt.Sprintf("its node %s evicted it (%s)", node, said(p.Status.Reason, p.Status.Message))
	case p.Status.Reason == reasonNodeShutdown, p.Status.Reason == reasonNodeShutdownRefused, p.Status.Reason == reasonNodeShutdownOld:
		return wire.EventCodeInstanceInterrupted, fmt.Sprintf("its node %s is shutting down (%s)", node, said(p.Status.Reason, p.Status.Message))
	case target == reasonEvictionByEvictionAPI:
		return wire.EventCodeInstanceInterrupted, fmt.Sprintf("it was evicted from node %s, which is being drained (%s)", node, said(target, message))
	case target == reasonPreemptionByScheduler:
		return wire.EventCodeInstanceInterrupted, fmt.Sprintf("the scheduler preempted it on node %s (%s)", node, said(target, message))
	case target == reasonTerminationByKubelet:
		return wire.EventCodeInstanceInterrupted, fmt.Sprintf("the kubelet of node %s terminated it (%s)", node, said(target, message))
	}
	return "", ""
}

// stopMessage is the event message for a group whose pod stopped or is
// taken away: code and why from cause, or a crash when code is "".
func stopMessage(p *corev1.Pod, instance, code, why string) string {
	switch code {
	case "":
		reason := string(p.Status.Phase)
		if p.Status.Reason != "" {
			reason += " (" + p.Status.Reason + ")"
		}
		return fmt.Sprintf("Game server container group %s stopped: pod %s %s.", p.Name, p.Name, reason)
	case wire.EventCodeInstanceReplacedUnhealthy, wire.EventCodeInstanceInterrupted:
		return fmt.Sprintf("Instance %s: game server container group %s is replaced: %s.", instance, p.Name, why)
	}
	return fmt.Sprintf("Game server container group %s is replaced: %s.", p.Name, why)
}
