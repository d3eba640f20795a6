package kube_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kube"
)

// kubelet plays the scheduler and the kubelets of a cluster for the
// controller's pods, on this machine: no container runtime runs here, so
// a pod's game server container is the chat example run as a process.
//
//   - A new pod is bound to the node of its instance (node-<n>, at
//     127.0.0.<10+n>; once that node is lost, node-<n>-<g>, at
//     127.0.<10+g>.<10+n>).
//   - A bound pod gets an address of its own (127.0.1.<k>); its game
//     server container's program starts with the container's environment,
//     resolved as a kubelet resolves it (Secret references read from the
//     API server), listening on the pod's address and container port. Each
//     host port is forwarded from the node's address to the pod's, as the
//     port mapping of a cluster's network does. The pod is reported Running.
//   - A program that exits is started again (restartPolicy Always), with
//     the container's restart count raised.
//   - A pod being deleted has its program stopped (SIGTERM, as a kubelet
//     sends it) and its forwarders closed, and is then removed; so does
//     a pod reported Failed, which stays.
//   - A node lost (lose) has no kubelet any more: its pods' programs run
//     on (the node is cut off, not stopped) but are not started again
//     when they exit, and nothing of theirs is reported or removed.
type kubelet struct {
	t   testing.TB
	cs  kubernetes.Interface
	ns  string
	bin string

	mu     sync.Mutex
	pods   map[string]*fakePod
	nextIP int
	closed bool
	// nodes are the nodes made, by name, with their addresses; lost the
	// nodes cut off; gen counts, per instance, the nodes lost.
	nodes map[string]string
	lost  map[string]bool
	gen   map[int]int
	// stopping counts the pods being stopped, apart from the informer's
	// handler, which a program slow to exit would otherwise hold up.
	stopping sync.WaitGroup
}

type fakePod struct {
	name, node    string
	podIP, hostIP string
	env           []string
	port          int
	out           *exectest.SyncBuffer
	cmd           *exec.Cmd
	exitedCh      chan struct{}
	forwarders    []net.Listener
	restarts      int32
	stopping      bool
}

// startKubelet runs the kubelet over namespace ns until the test ends.
func startKubelet(t testing.TB, cs kubernetes.Interface, ns, bin string) *kubelet {
	k := &kubelet{t: t, cs: cs, ns: ns, bin: bin, pods: map[string]*fakePod{}, nodes: map[string]string{}, lost: map[string]bool{}, gen: map[int]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			k.handle(ctx, p)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) }}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
		k.mu.Lock()
		k.closed = true
		pods := k.pods
		k.mu.Unlock()
		for _, fp := range pods {
			k.stop(fp.name)
			if t.Failed() {
				t.Logf("pod %s output:\n%s", fp.name, fp.out.String())
			}
		}
		k.stopping.Wait()
	})
	return k
}

// node is the node of instance n, made the first time.
func (k *kubelet) node(ctx context.Context, instance string) (string, error) {
	n, _ := strconv.Atoi(instance)
	k.mu.Lock()
	g := k.gen[n]
	name, ip := fmt.Sprintf("node-%d", n), hostIP(n)
	if g > 0 {
		name, ip = fmt.Sprintf("node-%d-%d", n, g), fmt.Sprintf("127.0.%d.%d", 10+g, 10+n)
	}
	k.nodes[name] = ip
	k.mu.Unlock()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	if _, err := k.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	return name, nil
}

func hostIP(instance int) string { return fmt.Sprintf("127.0.0.%d", 10+instance) }

// lose cuts node off: its kubelet does nothing more, and the pods of its
// instance go to another node from now on.
func (k *kubelet) lose(node string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lost[node] = true
	var n int
	fmt.Sscanf(node, "node-%d", &n)
	k.gen[n]++
}

// moveOff sends the pods of node's instance to another node from now on,
// as a scheduler does once the node is cordoned; the node's kubelet goes
// on.
func (k *kubelet) moveOff(node string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var n int
	fmt.Sscanf(node, "node-%d", &n)
	k.gen[n]++
}

func (k *kubelet) handle(ctx context.Context, p *corev1.Pod) {
	k.check(ctx, p.Name, k.step(ctx, p))
}

func (k *kubelet) check(ctx context.Context, name string, err error) {
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.t.Errorf("kubelet, pod %s: %v", name, err)
	}
}

func (k *kubelet) step(ctx context.Context, p *corev1.Pod) error {
	k.mu.Lock()
	lost := k.lost[p.Spec.NodeName]
	k.mu.Unlock()
	if lost {
		return nil
	}
	if p.DeletionTimestamp != nil {
		k.stopping.Add(1)
		go func() {
			defer k.stopping.Done()
			k.stop(p.Name)
			k.check(ctx, p.Name, k.cs.CoreV1().Pods(k.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
		}()
		return nil
	}
	if p.Spec.NodeName == "" {
		node, err := k.node(ctx, p.Labels[kube.LabelInstance])
		if err != nil {
			return err
		}
		return k.cs.CoreV1().Pods(k.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
	}
	if p.Status.Phase == corev1.PodFailed {
		k.stopping.Add(1)
		go func() { defer k.stopping.Done(); k.stop(p.Name) }()
		return nil
	}
	k.mu.Lock()
	fp, ok := k.pods[p.Name]
	if !ok {
		k.nextIP++
		fp = &fakePod{name: p.Name, node: p.Spec.NodeName, hostIP: k.nodes[p.Spec.NodeName], podIP: fmt.Sprintf("127.0.1.%d", k.nextIP), out: &exectest.SyncBuffer{}}
		k.pods[p.Name] = fp
	}
	k.mu.Unlock()
	if ok {
		return nil
	}
	go func() {
		// A conflict: a restart's report (the program exited at once,
		// its port taken, say) came first; the later report stands.
		k.check(ctx, p.Name, k.start(ctx, p, fp))
	}()
	return nil
}

// start starts a bound pod: its environment, its host ports (waiting, as
// a scheduler would, while a pod being removed still holds them), its
// program, its status.
func (k *kubelet) start(ctx context.Context, p *corev1.Pod, fp *fakePod) error {
	ct := p.Spec.Containers[0]
	for _, e := range ct.Env {
		v := e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			s, err := k.cs.CoreV1().Secrets(k.ns).Get(ctx, ref.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v = string(s.Data[ref.SecretKeyRef.Key])
		}
		fp.env = append(fp.env, e.Name+"="+v)
	}
	for _, cp := range ct.Ports {
		fp.port = int(cp.ContainerPort)
		addr := net.JoinHostPort(fp.hostIP, strconv.Itoa(int(cp.HostPort)))
		ln, err := listenWhenFree(ctx, addr)
		if err != nil {
			return err
		}
		k.mu.Lock()
		fp.forwarders = append(fp.forwarders, ln)
		k.mu.Unlock()
		go forward(ln, net.JoinHostPort(fp.podIP, strconv.Itoa(int(cp.ContainerPort))))
	}
	k.mu.Lock()
	stopping := fp.stopping
	k.mu.Unlock()
	if stopping {
		return nil
	}
	k.run(fp)
	return k.report(ctx, fp, corev1.PodRunning)
}

// run starts the pod's program, and again each time it exits until the
// pod or the kubelet stops.
func (k *kubelet) run(fp *fakePod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if fp.stopping || k.closed {
		return
	}
	cmd := exec.Command(k.bin, "-host", fp.podIP, "-port", strconv.Itoa(fp.port))
	cmd.Env = append(os.Environ(), fp.env...)
	cmd.Stdout, cmd.Stderr = fp.out, fp.out
	if err := cmd.Start(); err != nil {
		k.t.Errorf("kubelet, pod %s: %v", fp.name, err)
		return
	}
	exited := make(chan struct{})
	fp.cmd, fp.exitedCh = cmd, exited
	go func() {
		cmd.Wait()
		close(exited)
		k.mu.Lock()
		again := !fp.stopping && !k.closed && !k.lost[fp.node]
		if again {
			fp.restarts++
		}
		k.mu.Unlock()
		if again {
			k.run(fp)
			k.report(context.Background(), fp, corev1.PodRunning)
		}
	}()
}

// report writes the pod's status as a kubelet does.
func (k *kubelet) report(ctx context.Context, fp *fakePod, phase corev1.PodPhase) error {
	p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, fp.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	k.mu.Lock()
	restarts := fp.restarts
	k.mu.Unlock()
	p.Status.Phase, p.Status.HostIP, p.Status.PodIP = phase, fp.hostIP, fp.podIP
	p.Status.HostIPs, p.Status.PodIPs = []corev1.HostIP{{IP: fp.hostIP}}, []corev1.PodIP{{IP: fp.podIP}}
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	_, err = k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// stop stops a pod's program (SIGTERM, then a kill after 10 s; a kill at
// once when the test is over) and its forwarders.
func (k *kubelet) stop(name string) {
	k.mu.Lock()
	fp := k.pods[name]
	if fp == nil || (fp.stopping && !k.closed) {
		k.mu.Unlock()
		return
	}
	fp.stopping = true
	cmd, exited, forwarders := fp.cmd, fp.exitedCh, fp.forwarders
	k.mu.Unlock()
	for _, ln := range forwarders {
		ln.Close()
	}
	if cmd == nil {
		return
	}
	k.mu.Lock()
	closed := k.closed
	k.mu.Unlock()
	if closed {
		// The test is over: no one waits for a clean end (a program cut
		// off from Anylift would take its while over ProcessEnding).
		cmd.Process.Kill()
		<-exited
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Process.Signal(syscall.SIGCONT) // one stopped (signal) takes it now
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// signal sends the program of a pod sig (SIGSTOP: a game server that
// answers nothing and keeps its connections; SIGKILL: one that dies).
func (k *kubelet) signal(name string, sig syscall.Signal) {
	k.mu.Lock()
	fp := k.pods[name]
	var cmd *exec.Cmd
	if fp != nil {
		cmd = fp.cmd
	}
	k.mu.Unlock()
	if cmd == nil {
		k.t.Fatalf("kubelet: pod %s runs no program", name)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		k.t.Fatalf("kubelet: signal %v to pod %s: %v", sig, name, err)
	}
}

// output is what the programs of a pod have written.
func (k *kubelet) output(name string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if fp := k.pods[name]; fp != nil {
		return fp.out.String()
	}
	return ""
}

// running counts the pods whose program runs now.
func (k *kubelet) running() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, fp := range k.pods {
		if !fp.stopping {
			n++
		}
	}
	return n
}

// listenWhenFree listens on addr, waiting up to 10 s for a pod being
// removed to free it.
func listenWhenFree(ctx context.Context, addr string) (net.Listener, error) {
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return ln, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// forward copies connections accepted on ln to and from to.
func forward(ln net.Listener, to string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.DialTimeout("tcp", to, 5*time.Second)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(up, c); done <- struct{}{} }()
			go func() { io.Copy(c, up); done <- struct{}{} }()
			<-done
		}()
	}
}
