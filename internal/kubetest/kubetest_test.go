package kubetest_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/kubetest"
)

// TestAPIServer starts the real API server and takes a pod through its
// life with the test as scheduler and kubelet: created Pending, bound to
// a node, reported Running, deleted.
func TestAPIServer(t *testing.T) {
	c := kubetest.Start(t)
	ctx := context.Background()
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil || v.GitVersion == "" {
		t.Fatalf("server version %+v %v", v, err)
	}
	t.Logf("kube-apiserver %s at %s", v.GitVersion, c.Config.Host)
	ns := c.Namespace(t)
	node, err := c.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := c.Client.CoreV1().Pods(ns)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "game", Labels: map[string]string{"app": "game"}},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "game", Image: "registry.example/game:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		t.Fatalf("new pod %s on %q", pod.Status.Phase, pod.Spec.NodeName)
	}
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if pod, err = pods.Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, "127.0.0.1"
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=game"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Status.Phase != corev1.PodRunning || list.Items[0].Spec.NodeName != node.Name {
		t.Fatalf("listed %+v %v", list, err)
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if list, err = pods.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after delete: %+v %v", list, err)
	}
}
