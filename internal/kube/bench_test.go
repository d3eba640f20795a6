package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
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
		done <- kube.New(kube.Config{Client: client, Namespace: ns, Service: env.Server.Service(),
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
