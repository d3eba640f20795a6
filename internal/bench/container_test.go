package bench

// The issue 22 placement benchmark: BenchmarkPlacement's full placement on
// a container fleet run on a real Kubernetes API server.
//
//	export KUBEBUILDER_ASSETS=$(scripts/k8s-test-bins.sh)
//	go test ./internal/bench -run '^$' -bench 'Ceiling|Placement/sqlite$|ContainerPlacement/sqlite$' -benchtime 1000x
//
// Results, method and machine are in docs/benchmarks.md ("Container
// fleets: a full placement").

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/server"
	gl "github.com/anylift/anylift/sdk/server"
)

// groupsPerInstance is how many game server container groups (pods, each
// one game server process) an instance of the benchmark fleet runs: the
// fleet's capacity moves in steps of this many.
const groupsPerInstance = 100

// envTB is a testing.TB whose cleanups and temporary directories last
// until the environment they are registered with ends, for the API server
// a container benchmark keeps across its rounds.
type envTB struct {
	testing.TB
	ends *[]func()
}

func (t envTB) Cleanup(f func()) { *t.ends = append(*t.ends, f) }

func (t envTB) TempDir() string {
	dir, err := os.MkdirTemp("", "anylift-bench-kube-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// ctrPlacement is a real API server (etcd and kube-apiserver), a server
// running container fleets on it, a container fleet, and the test acting
// as the cluster's kubelets, whose game servers fill a pool like the
// Anywhere benchmark's. It lasts for every round of one benchmark.
type ctrPlacement struct {
	placement
	kubelet *benchKubelet
	client  *client
	ends    []func() // run last to first when the benchmark is done
}

var ctrPlacementEnvs = map[string]*ctrPlacement{}

func ctrPlacementEnv(b *testing.B, backend string, st procStore) *ctrPlacement {
	kubetest.Assets(b)
	placementMu.Lock()
	defer placementMu.Unlock()
	if e, ok := ctrPlacementEnvs[backend]; ok {
		return e
	}
	raiseFileLimit(b)
	e := &ctrPlacement{}
	ctrPlacementEnvs[backend] = e
	cluster := kubetest.Start(envTB{b, &e.ends})
	ns := cluster.Namespace(b)
	e.srv = startProcServer(b, st.url, st.sync, func(c *server.Config) {
		c.Kube = &server.KubeConfig{Kubeconfig: cluster.Kubeconfig, Namespace: ns}
	})
	e.ends = append(e.ends, func() { closeServer(e.srv) })
	e.client = newClient(e.srv.URL())
	fleetID := containerFleet(b, e.client)
	e.fleet = &benchFleet{URL: e.srv.URL(), FleetID: fleetID, Location: apitest.Region}
	e.pool = newPool(e.fleet, "ctr-"+backend)
	e.kubelet = startBenchKubelet(b, cluster, ns, e.pool, &e.ends)
	return e
}

// endCtrPlacement ends the environment of backend once its benchmark is
// done: game servers, server, kubelets, API server.
func endCtrPlacement(backend string) {
	placementMu.Lock()
	e := ctrPlacementEnvs[backend]
	delete(ctrPlacementEnvs, backend)
	placementMu.Unlock()
	if e == nil {
		return
	}
	for i := len(e.ends) - 1; i >= 0; i-- {
		e.ends[i]()
	}
}

// containerFleet creates, through the API, a game server container group
// definition (one game server container, one port) and a container fleet
// of groupsPerInstance groups an instance, at 0 instances.
func containerFleet(b *testing.B, c *client) string {
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(c.do("CreateContainerGroupDefinition", []byte(`{"Name": "arena", "OperatingSystem": "AMAZON_LINUX_2023",
		"TotalMemoryLimitMebibytes": 256, "TotalVcpuLimit": 0.5,
		"GameServerContainerDefinition": {"ContainerName": "arena", "ImageUri": "registry.example/arena:1", "ServerSdkVersion": "5.2.0",
			"PortConfiguration": {"ContainerPortRanges": [{"FromPort": 7777, "ToPort": 7777, "Protocol": "TCP"}]}}}`), nil))
	var out struct{ ContainerFleet struct{ FleetId string } }
	must(c.do("CreateContainerFleet", fmt.Appendf(nil, `{"FleetRoleArn": "arn:aws:iam::%s:role/arena",
		"GameServerContainerGroupDefinitionName": "arena", "GameServerContainerGroupsPerInstance": %d,
		"InstanceConnectionPortRange": {"FromPort": 40000, "ToPort": %d}}`, accountID, groupsPerInstance, 40000+groupsPerInstance-1), &out))
	id := out.ContainerFleet.FleetId
	must(c.do("UpdateFleetCapacity", fmt.Appendf(nil, `{"FleetId": %q, "DesiredInstances": 0, "MinSize": 0, "MaxSize": 100}`, id), nil))
	return id
}

// fill scales the fleet until at least n game server container groups
// are IDLE with their game server ready (in the pool), none PENDING.
func (e *ctrPlacement) fill(b *testing.B, n int) {
	instances := (n + groupsPerInstance - 1) / groupsPerInstance
	if err := e.client.do("UpdateFleetCapacity", fmt.Appendf(nil, `{"FleetId": %q, "DesiredInstances": %d, "MinSize": 0, "MaxSize": 100}`,
		e.fleet.FleetID, instances), nil); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		e.pool.mu.Lock()
		ready := len(e.pool.idle)
		e.pool.mu.Unlock()
		var capOut struct {
			FleetCapacity []struct {
				GameServerContainerGroupCounts struct{ IDLE, PENDING, ACTIVE int }
			}
		}
		if err := e.client.do("DescribeFleetCapacity", fmt.Appendf(nil, `{"FleetIds": [%q]}`, e.fleet.FleetID), &capOut); err != nil {
			b.Fatal(err)
		}
		g := capOut.FleetCapacity[0].GameServerContainerGroupCounts
		if ready >= n && g.IDLE >= n && g.PENDING == 0 {
			return
		}
		if err := e.kubelet.failed(); err != nil {
			b.Fatal(err)
		}
		if time.Now().After(deadline) {
			b.Fatalf("after 10 minutes: %d game servers ready, groups %d IDLE %d PENDING %d ACTIVE; want %d ready and IDLE",
				ready, g.IDLE, g.PENDING, g.ACTIVE, n)
		}
		<-tick.C
	}
}

// BenchmarkContainerPlacement is BenchmarkPlacement on a container fleet:
// the same full placement (CreateGameSession → the process's
// ActivateGameSession answered → CreatePlayerSession →
// AcceptPlayerSession), the same 16 callers, the same pool size
// (MinIdleProcesses + b.N ready game servers before the timer starts), but
// each game server is the one process of a game server container group,
// a pod on a real API server made by the server's own controller
// (CreateContainerFleet, UpdateFleetCapacity), with the test as the
// kubelets: it binds each pod, reports it Running and starts its game
// server as a Go server SDK process in this OS process, configured only by
// the pod's GAMELIFT_SDK_* environment (its auth token read from the
// group's Secret). After the timer stops the used game servers end
// (ProcessEnding) and their containers restart, as restartPolicy Always
// does: a fresh process in the same group, ready for the next round.
func BenchmarkContainerPlacement(b *testing.B) {
	for _, st := range procStores() {
		b.Run(st.name, func(b *testing.B) {
			e := ctrPlacementEnv(b, st.name, st)
			e.fill(b, MinIdleProcesses+b.N)
			e.pool.mu.Lock()
			connected := len(e.pool.idle)
			e.pool.mu.Unlock()
			c := newClient(e.fleet.URL)
			var mu sync.Mutex
			var used []*gl.Process
			cpu := readCPUWork(b)
			run(b, func(r *rand.Rand) error {
				p, err := e.place(c, r)
				if p != nil {
					mu.Lock()
					used = append(used, p)
					mu.Unlock()
				}
				return err
			})
			reportSelfCPU(b, cpu, b.N)
			b.ReportMetric(float64(connected), "procs")
			e.stages.report(b)
			e.pool.retire(used, 32)
			e.kubelet.restart(used)
		})
		endCtrPlacement(st.name)
	}
}

// benchKubelet plays the scheduler and kubelets of the cluster for the
// fleet's pods: a new pod is bound to the node of its instance
// (node-<n>, at 127.0.0.<10+n>), reported Running with an address of its
// own, and its game server container started as a Go server SDK process
// in this OS process, whose only configuration is the container's
// environment as a kubelet resolves it (the auth token read from the
// Secret). Its OnStartGameSession activates the session and reports it to
// the pool. A pod being deleted has its game server destroyed and is
// removed.
type benchKubelet struct {
	cs   kubernetes.Interface
	ns   string
	pool *pool
	sem  chan struct{}

	mu     sync.Mutex
	pods   map[string]*benchPod // by pod name
	procs  map[*gl.Process]*benchPod
	nextIP int
	err    error
	closed bool
}

type benchPod struct {
	name string
	env  map[string]string
	proc *gl.Process
}

func startBenchKubelet(b *testing.B, cluster *kubetest.Cluster, ns string, p *pool, ends *[]func()) *benchKubelet {
	// The kubelets' own client, not limited to client-go's default 5
	// requests a second: a real cluster has one client per node.
	rc := rest.CopyConfig(cluster.Config)
	rc.QPS, rc.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	k := &benchKubelet{cs: cs, ns: ns, pool: p, sem: make(chan struct{}, 32),
		pods: map[string]*benchPod{}, procs: map[*gl.Process]*benchPod{}}
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	handle := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			k.handle(ctx, pod)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) }}); err != nil {
		b.Fatal(err)
	}
	f.Start(ctx.Done())
	*ends = append(*ends, func() {
		cancel()
		f.Shutdown()
		k.mu.Lock()
		k.closed = true
		var procs []*gl.Process
		for x := range k.procs {
			procs = append(procs, x)
		}
		k.mu.Unlock()
		closeAll(procs, 32, func(x *gl.Process) { x.Destroy() })
	})
	return k
}

// failed is the first error the kubelet met, if any.
func (k *benchKubelet) failed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *benchKubelet) fail(ctx context.Context, pod string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	k.mu.Lock()
	if k.err == nil {
		k.err = fmt.Errorf("kubelet, pod %s: %w", pod, err)
	}
	k.mu.Unlock()
}

// async runs fn with at most cap(k.sem) at once, off the informer's
// handler.
func (k *benchKubelet) async(fn func()) {
	go func() {
		k.sem <- struct{}{}
		defer func() { <-k.sem }()
		fn()
	}()
}

func (k *benchKubelet) handle(ctx context.Context, p *corev1.Pod) {
	switch {
	case p.DeletionTimestamp != nil:
		k.async(func() {
			k.mu.Lock()
			bp := k.pods[p.Name]
			delete(k.pods, p.Name)
			if bp != nil && bp.proc != nil {
				delete(k.procs, bp.proc)
			}
			k.mu.Unlock()
			if bp != nil && bp.proc != nil {
				bp.proc.Destroy()
			}
			err := k.cs.CoreV1().Pods(k.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if !apierrors.IsNotFound(err) {
				k.fail(ctx, p.Name, err)
			}
		})
	case p.Spec.NodeName == "":
		k.async(func() {
			err := k.cs.CoreV1().Pods(k.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
				Target: corev1.ObjectReference{Kind: "Node", Name: "node-" + p.Labels[kube.LabelInstance]}}, metav1.CreateOptions{})
			if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				k.fail(ctx, p.Name, err)
			}
		})
	default:
		k.mu.Lock()
		_, seen := k.pods[p.Name]
		if !seen {
			k.pods[p.Name] = &benchPod{name: p.Name}
			k.nextIP++
		}
		ip := k.nextIP
		k.mu.Unlock()
		if seen {
			return
		}
		pod := p.DeepCopy()
		k.async(func() { k.fail(ctx, pod.Name, k.start(ctx, pod, ip)) })
	}
}

// start resolves the game server container's environment, reports the
// pod Running and starts its game server.
func (k *benchKubelet) start(ctx context.Context, p *corev1.Pod, ip int) error {
	env := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		v := e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			s, err := k.cs.CoreV1().Secrets(k.ns).Get(ctx, ref.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v = string(s.Data[ref.SecretKeyRef.Key])
		}
		env[e.Name] = v
	}
	n, _ := strconv.Atoi(p.Labels[kube.LabelInstance])
	hostIP, podIP := fmt.Sprintf("127.0.0.%d", 10+n), fmt.Sprintf("127.1.%d.%d", ip/250, 1+ip%250)
	now := metav1.Now()
	p.Status.Phase, p.Status.HostIP, p.Status.PodIP = corev1.PodRunning, hostIP, podIP
	p.Status.HostIPs, p.Status.PodIPs = []corev1.HostIP{{IP: hostIP}}, []corev1.PodIP{{IP: podIP}}
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	if _, err := k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	k.mu.Lock()
	bp := k.pods[p.Name]
	k.mu.Unlock()
	if bp == nil {
		return nil // deleted meanwhile
	}
	bp.env = env
	return k.run(bp)
}

// run starts the pod's game server: the Go server SDK's Init with no
// parameters but the container's environment, then ProcessReady on the
// container port.
func (k *benchKubelet) run(bp *benchPod) error {
	opts := sdkOptions()
	opts.Getenv = func(name string) string { return bp.env[name] }
	proc, err := gl.Init(gl.ServerParameters{}, opts)
	if err != nil {
		return err
	}
	err = proc.ProcessReady(gl.ProcessParameters{
		Port: 7777,
		OnStartGameSession: func(gs gl.GameSession) {
			err := proc.ActivateGameSession()
			k.pool.waiter(gs.GameSessionID) <- started{proc, err}
		},
		OnProcessTerminate: func() {},
	})
	if err != nil {
		proc.Destroy()
		return err
	}
	k.mu.Lock()
	if k.pods[bp.name] != bp || k.closed {
		k.mu.Unlock()
		proc.Destroy()
		return nil
	}
	bp.proc = proc
	k.procs[proc] = bp
	k.mu.Unlock()
	k.pool.mu.Lock()
	k.pool.idle = append(k.pool.idle, proc)
	k.pool.mu.Unlock()
	return nil
}

// restart starts the game server again in the pods whose game servers
// ended (ProcessEnding, Destroy), as a kubelet restarts a container that
// exits: a fresh process id, the same group.
func (k *benchKubelet) restart(ended []*gl.Process) {
	ctx := context.Background()
	k.mu.Lock()
	var again []*benchPod
	for _, x := range ended {
		if bp := k.procs[x]; bp != nil {
			delete(k.procs, x)
			bp.proc = nil
			again = append(again, bp)
		}
	}
	k.mu.Unlock()
	for _, bp := range again {
		k.async(func() { k.fail(ctx, bp.name, k.run(bp)) })
	}
}
