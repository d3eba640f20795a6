package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/anylift/anylift/internal/containers"
)

// Taints autoscalers put on a node they are about to remove (cordoning
// it is what kubectl drain does first).
const (
	taintClusterAutoscaler = "ToBeDeletedByClusterAutoscaler" // cluster-autoscaler, while it drains a node it removes
	taintKarpenter         = "karpenter.sh/disrupted"         // Karpenter v1, while it disrupts a node
	taintKarpenterOld      = "karpenter.sh/disruption"        // Karpenter before v1 (value "disrupting")
)

// recycling says why a node is being taken out of service ahead of time,
// or "" when it is not: cordoned (spec.unschedulable, the first step of
// kubectl drain), or tainted by an autoscaler that is removing it. This
// is GameLift's "instance at risk of interruption": its game server
// container groups are recycled once they have no game session. A node
// that is not ready or unreachable is not recycled: the cluster evicts
// its pods, and cause says so.
func recycling(n *corev1.Node) string {
	for _, t := range n.Spec.Taints {
		switch t.Key {
		case taintClusterAutoscaler:
			return "is being removed by the cluster autoscaler (taint " + t.Key + ")"
		case taintKarpenter, taintKarpenterOld:
			return "is being disrupted by Karpenter (taint " + t.Key + ")"
		}
	}
	if n.Spec.Unschedulable {
		return "is cordoned (unschedulable)"
	}
	return ""
}

// nodeSeen asks for a reconciliation when a node starts being taken out
// of service.
func (c *Controller) nodeSeen(old, obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok || recycling(n) == "" {
		return
	}
	if o, ok := old.(*corev1.Node); ok && recycling(o) != "" {
		return // seen already
	}
	c.Kick()
}

// recycle recycles the groups of a fleet (live, as reconcileFleet found
// them) whose pods are on a node being taken out of service
// (containers.Service.RecycleContainerGroup): each gets INSTANCE_RECYCLED
// once; an idle one is removed, its pod deleted, to be replaced where
// the scheduler puts it; a busy one stays until its sessions have ended,
// and goes then whatever its node has become (and with or without
// WatchNodes: it takes no new server process). It returns the groups
// left live, and the errors.
func (c *Controller) recycle(ctx context.Context, r *containers.ContainerFleetRun, live []group) ([]group, []error) {
	type job struct {
		g   group
		why string
	}
	var jobs []job
	var kept []group
	for _, g := range live {
		cp := r.Computes[g.pod.Name]
		recycled := cp != nil && !cp.RecycleTime.IsZero()
		why := ""
		if c.nodes != nil && !recycled {
			if n, err := c.nodes.Get(g.pod.Spec.NodeName); err == nil {
				why = recycling(n)
			}
		}
		// A busy group recycled already waits for its sessions without
		// a write each pass.
		if (recycled && !r.Busy[g.pod.Name]) || why != "" {
			jobs = append(jobs, job{g, why})
			continue
		}
		kept = append(kept, g)
	}
	removed := make([]bool, len(jobs))
	errs := c.parallel(len(jobs), func(i int) error {
		p, f := jobs[i].g.pod, r.Fleet.ID
		instance := f + "-" + p.Labels[LabelInstance]
		msg := fmt.Sprintf("Instance %s: game server container group %s is recycled once it has no active game session: its node %s %s.",
			instance, p.Name, p.Spec.NodeName, jobs[i].why)
		ok, err := c.cfg.Service.RecycleContainerGroup(ctx, f, p.Name, msg)
		if err != nil || !ok {
			return err
		}
		removed[i] = true
		c.cfg.Log.Info("recycled a game server container group off a node taken out of service", "fleet", f, "group", p.Name, "node", p.Spec.NodeName)
		return c.removePod(ctx, p.Name)
	})
	for i, j := range jobs {
		if !removed[i] {
			kept = append(kept, j.g)
		}
	}
	return kept, errs
}
