package kube

import (
	"context"
	"sync"
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
	return c.elect(ctx, identity, func(ctx context.Context) {
		if err := c.Run(ctx); err != nil {
			c.cfg.Log.Error("container fleet controller stopped", "err", err)
		}
	})
}

// RunOwned runs the controller on a node taking part in fleet ownership
// (Config.Owners), until ctx ends. Every such node runs it, and each
// reconciles the fleets it owns: the store lets only a fleet's owner
// write its computes, and the owner is the node that decides everything
// else for the fleet. The nodes still compete for the Lease: its holder
// removes what deleted fleets left (they have no owner), and reconciles
// every fleet while ownership is not in force (a node that takes no part
// in it is live), as RunElected's holder would.
func (c *Controller) RunOwned(ctx context.Context, identity string) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := c.elect(ctx, identity, func(ctx context.Context) {
			c.elected.Store(true)
			c.Kick()
			<-ctx.Done()
			c.elected.Store(false)
		})
		if err != nil {
			c.cfg.Log.Error("container fleet controller: the Lease", "err", err)
		}
	}()
	err := c.Run(ctx)
	cancel()
	wg.Wait()
	return err
}

// elect calls lead while this node holds the Lease (its context ends when
// it loses it), and competes for it again, until ctx ends.
func (c *Controller) elect(ctx context.Context, identity string, lead func(context.Context)) error {
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
					lead(ctx)
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
