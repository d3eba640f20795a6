package kube

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseName is the Lease in the controller's namespace that decides which
// of several Anylift nodes runs the controller.
const LeaseName = "anylift-container-fleets"

// RunElected runs the controller while this node (identity) holds the
// Lease, and competes for it again when it loses it, until ctx ends: of
// several nodes given the same cluster, one runs it at a time, and
// another takes over within the lease's 15 s when that one stops.
func (c *Controller) RunElected(ctx context.Context, identity string) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: c.cfg.Namespace},
		Client:     c.cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   15 * time.Second,
			RenewDeadline:   10 * time.Second,
			RetryPeriod:     2 * time.Second,
			ReleaseOnCancel: true,
			Name:            LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					c.cfg.Log.Info("container fleet controller elected", "identity", identity)
					if err := c.Run(ctx); err != nil {
						c.cfg.Log.Error("container fleet controller stopped", "err", err)
					}
				},
				OnStoppedLeading: func() { c.cfg.Log.Info("container fleet controller no longer elected", "identity", identity) },
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}
