package kube_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/store"
)

// BenchmarkScaleUp200 measures, on a real API server, the time from
// UpdateFleetCapacity 0 -> 200 to 200 pods created, with the controller's
// client allowed 200 requests a second as "anylift serve" sets it. No
// kubelet runs: the pods stay Pending. Between iterations the fleet
// scales back to 0 and its pods go, untimed.
func BenchmarkScaleUp200(b *testing.B) {
	cluster := kubetest.Start(b)
	ns := cluster.Namespace(b)
	env := apitest.Start(b)
	rc := rest.CopyConfig(cluster.Config)
	rc.QPS, rc.Burst = 200, 400
	client, err := kube.NewClient(rc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- kube.New(kube.Config{Client: client, Namespace: ns, Service: env.Server.Containers(),
			SDKEndpoint: env.Server.SDKEndpoint(), Interval: 100 * time.Millisecond}).Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	gl := env.Client()
	fleet := chatFleet(b, gl, 40000)
	count := func() int {
		list, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	scale := func(n int32) {
		if _, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
			DesiredInstances: aws.Int32(n), MinSize: aws.Int32(0), MaxSize: aws.Int32(200)}); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for count() != int(n) {
			if time.Now().After(deadline) {
				b.Fatalf("%d pods after 2 minutes, want %d", count(), n)
			}
			<-tick.C
		}
	}
	scale(0)
	b.ResetTimer()
	for range b.N {
		scale(200)
		b.StopTimer()
		scale(0)
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/200pods")
}

// BenchmarkBufferSteadyRate measures how well a 20 % buffer policy keeps
// a free game server on a container fleet on a real API server, with the
// test as kubelets running the chat example: game sessions are created
// one at a time at a steady rate (each retried every 10 ms while the
// fleet has no free server), and a sampler reads the fleet's
// AvailableGameSessions (as /metrics computes it) every 20 ms. Reported:
// the first gap (from the first session to the first sample with a
// server free), the time with no available server after it (samples
// without one, 20 ms each), the sessions that found no free server
// (FleetCapacityExceededException) and the longest such wait. One
// iteration per rate is enough: run with -benchtime 1x.
func BenchmarkBufferSteadyRate(b *testing.B) {
	cluster := kubetest.Start(b)
	for _, rate := range []int{1, 4} {
		b.Run(fmt.Sprintf("%d-per-s", rate), func(b *testing.B) {
			w := newWorld(b, cluster)
			fleet := w.chatFleet(freePort(b))
			w.capacity(fleet, 1, 60)
			buffer20(b, w.gl, fleet)
			w.groups(fleet, 0, 2)
			for range b.N {
				bufferRun(b, w, fleet, 40, time.Second/time.Duration(rate))
			}
		})
	}
}

// bufferRun creates n sessions every interval and reports the figures of
// BenchmarkBufferSteadyRate.
func bufferRun(b *testing.B, w *world, fleet string, n int, interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := w.api.Server.Store()
	var f *game.Fleet
	if err := st.View(ctx, func(tx store.Tx) error {
		var err error
		f, err = tx.GetFleet(fleet)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	available := func() int {
		var m []game.FleetMetrics
		now := time.Now()
		if err := st.View(ctx, func(tx store.Tx) error {
			var err error
			m, err = tx.FleetMetrics(f, now, now)
			return err
		}); err != nil || len(m) == 0 {
			return -1
		}
		return m[0].AvailableGameSessions
	}
	// The sampler: the first gap ends at the first sample with a server
	// free after the first session; from then on, every sample without
	// one counts its interval.
	const every = 20 * time.Millisecond
	started := make(chan time.Time, 1)
	type samples struct {
		firstGap, without time.Duration
		after             bool
	}
	result := make(chan samples, 1)
	go func() {
		var s samples
		t0 := <-started
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				result <- s
				return
			case now := <-tick.C:
				free := available()
				switch {
				case !s.after && free > 0:
					s.after, s.firstGap = true, now.Sub(t0)
				case s.after && free == 0:
					s.without += every
				}
			}
		}
	}()
	var waits int
	var longest time.Duration
	b.ResetTimer()
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		t := time.Now()
		waited := false
		for {
			_, err := w.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
			if err == nil {
				break
			}
			var full *types.FleetCapacityExceededException
			if !errors.As(err, &full) {
				b.Fatal(err)
			}
			waited = true
			time.Sleep(10 * time.Millisecond)
		}
		if i == 0 {
			started <- t
		}
		if waited {
			waits++
			longest = max(longest, time.Since(t))
		}
	}
	// Let the last scale-up land before the sampler stops.
	want := max((n*5+3)/4, n+2)
	w.groups(fleet, n, want-n)
	b.StopTimer()
	cancel()
	s := <-result
	b.ReportMetric(s.firstGap.Seconds(), "s-first-gap")
	b.ReportMetric(s.without.Seconds(), "s-without-server")
	b.ReportMetric(float64(waits), "waits")
	b.ReportMetric(longest.Seconds(), "s-longest-wait")
	b.ReportMetric(time.Since(start).Seconds(), "s-run")
}
