package multinode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/owners"
	sdk "github.com/anylift/anylift/sdk/server"
)

// TestContainerFleetOwnedOnKubernetes runs a container fleet on a real API
// server with two real nodes on PostgreSQL owning fleets (the default), the
// test as the cluster's scheduler and kubelets (each pod's game server a
// Go SDK process connected through nginx with the pod's environment). The
// fleet is owned by the node that does not hold the controller's Lease, and
// that node makes its pods (the store would refuse the other's); it is
// killed (SIGKILL) right after
// a scale-up reached it, while it makes them, and the other node takes the
// fleet and goes on from where it was: the pods it finds are adopted, not
// made again (never more pods than wanted), the group hosting a game
// session keeps it, what the dead node left half made is completed, and a
// scale-down on the new owner removes the idle groups and spares the busy
// one (its session protected).
func TestContainerFleetOwnedOnKubernetes(t *testing.T) {
	kc := kubetest.Start(t)
	c := prepareCluster(t)
	ns := kc.Namespace(t)
	c.extra = []string{"--kubeconfig", kc.Kubeconfig, "--kube-namespace", ns}
	c.start(2, c.bin)
	k := startPodKubelet(t, kc.Client, ns)
	ctx := context.Background()
	gl := c.client()

	if _, err := gl.CreateContainerGroupDefinition(ctx, &gamelift.CreateContainerGroupDefinitionInput{
		Name: aws.String("arena"), OperatingSystem: types.ContainerOperatingSystemAmazonLinux2023,
		TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
		GameServerContainerDefinition: &types.GameServerContainerDefinitionInput{
			ContainerName: aws.String("game"), ImageUri: aws.String("registry.example/arena:1"), ServerSdkVersion: aws.String("5.2.0"),
			PortConfiguration: &types.ContainerPortConfiguration{ContainerPortRanges: []types.ContainerPortRange{
				{FromPort: aws.Int32(7777), ToPort: aws.Int32(7777), Protocol: types.IpProtocolUdp}}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	// The node holding the Lease, which runs the controller alone
	// without fleet ownership.
	var elected *node
	c.waitFor("a node to hold the controller's Lease", 60*time.Second, func() bool {
		l, err := kc.Client.CoordinationV1().Leases(ns).Get(ctx, kube.LeaseName, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil {
			elected = c.nodeByID(*l.Spec.HolderIdentity)
		}
		return elected != nil
	})
	// A fleet the other node should own (rendezvous hashing: one fleet
	// in two, so a few tries at most).
	var fleet string
	for try := 0; fleet == ""; try++ {
		if try == 20 {
			t.Fatal("20 fleets, all to be owned by the node holding the Lease")
		}
		out, err := gl.CreateContainerFleet(ctx, &gamelift.CreateContainerFleetInput{
			FleetRoleArn: aws.String("arn:aws:iam::123456789012:role/arena"), GameServerContainerGroupDefinitionName: aws.String("arena"),
			NewGameSessionProtectionPolicy: types.ProtectionPolicyFullProtection})
		if err != nil {
			t.Fatal(err)
		}
		id := aws.ToString(out.ContainerFleet.FleetId)
		if c.shouldOwn(id) != elected {
			fleet = id
		} else if _, err := gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: aws.String(id)}); err != nil {
			t.Fatal(err)
		}
	}
	// The fleet settles on the node that should own it (the node that
	// created it hands it on if that is the other).
	var first *node
	c.waitFor("the fleet on the node that should own it", 20*time.Second, func() bool {
		first = c.owner(fleet)
		return first != nil && first == c.shouldOwn(fleet)
	})
	other := elected
	groups := func(what string, pods, busy, idle int) {
		t.Helper()
		var last fleetState
		defer func() {
			if t.Failed() { // what the wait last saw, for the next reader of a failure
				owner := "none"
				if n := c.owner(fleet); n != nil {
					owner = n.internal
				}
				t.Logf("%s: last seen %+v, the fleet's owner %s", what, last, owner)
				// What the API server itself holds, beside what the test's
				// kubelet saw through its watch, and the groups the store
				// has: which of the two sides stopped.
				pods, err := kc.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
				if err != nil {
					t.Logf("listing the fleet's pods: %v", err)
				} else {
					for _, p := range pods.Items {
						t.Logf("pod %s: resource version %s, made %s, node %q, phase %s, deleting %v", p.Name, p.ResourceVersion, p.CreationTimestamp.Format("15:04:05"), p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil)
					}
					t.Logf("%d pods on the API server", len(pods.Items))
				}
				k.logHeard(t)
				rows, err := c.db.Query(`SELECT name, status FROM computes WHERE fleet_id = $1`, fleet)
				if err == nil {
					for rows.Next() {
						var name, status string
						rows.Scan(&name, &status)
						t.Logf("compute %s: %s", name, status)
					}
					rows.Close()
				}
			}
		}()
		c.waitFor(what, 60*time.Second, func() bool {
			got := c.fleetGroups(k, fleet)
			last = got
			return got.pods == pods && got.computes == pods && got.active == pods && got.busy == busy && got.idle == idle && got.matched
		})
	}
	capacity := func(via *gamelift.Client, desired int32) {
		t.Helper()
		if _, err := via.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
			DesiredInstances: aws.Int32(desired), MinSize: aws.Int32(0), MaxSize: aws.Int32(20)}); err != nil {
			t.Fatal(err)
		}
	}
	capacity(gl, 3)
	groups("three idle groups running", 3, 0, 3)

	gs, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	session := aws.ToString(gs.GameSession.GameSessionId)
	c.waitFor("the game session ACTIVE", 20*time.Second, func() bool { return c.sessionStatus(session) == "ACTIVE" })
	groups("one busy group and two idle", 3, 1, 2)
	before := k.names(fleet)

	// The owner is asked for 8 instances and killed as soon as its
	// controller has registered one more group: it is then making them
	// (registered groups, Secrets, pods, in parallel).
	k.resetMax(fleet)
	capacity(c.nodeClient(first), 8)
	c.waitFor("the owner to register a group", 30*time.Second, func() bool {
		return c.count(`SELECT COUNT(*) FROM computes WHERE fleet_id = $1`, fleet) > 3
	})
	first.cmd.Process.Signal(syscall.SIGKILL)
	<-first.done
	pods, err := kc.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the owner killed with %d pods made and %d groups registered, of 8",
		len(pods.Items), c.count(`SELECT COUNT(*) FROM computes WHERE fleet_id = $1`, fleet))
	took := c.waitFor("the other node to take the fleet", 30*time.Second, func() bool { return c.owner(fleet) == other })
	t.Logf("fleet taken over %v after its owner was killed", took)
	groups("eight groups running under the new owner", 8, 1, 7)
	for name := range before {
		if !k.names(fleet)[name] {
			t.Errorf("pod %s of the killed owner's time is gone: not adopted", name)
		}
	}
	if m := k.maxLive(); m > 8 {
		t.Errorf("%d pods at once, 8 wanted: the new owner made pods the old one had made", m)
	}
	if st := c.sessionStatus(session); st != "ACTIVE" {
		t.Errorf("game session %s after the takeover, want ACTIVE", st)
	}

	// Reconciliation goes on under the new owner: down to nothing, the
	// busy group, whose session is protected, stays.
	capacity(gl, 0)
	groups("only the busy group left", 1, 1, 0)
	if st := c.sessionStatus(session); st != "ACTIVE" {
		t.Errorf("game session %s after the scale-down, want ACTIVE", st)
	}
}

// shouldOwn returns the live node fleet should be owned by (owners.Owner
// over the live nodes).
func (c *cluster) shouldOwn(fleet string) *node {
	c.t.Helper()
	ids := c.nodeIDs()
	var all []string
	for id := range ids {
		all = append(all, id)
	}
	return ids[owners.Owner(fleet, all)]
}

// nodeByID returns the node of an id in the store.
func (c *cluster) nodeByID(id string) *node { return c.nodeIDs()[id] }

// nodeIDs maps the ids of the nodes in the store to the nodes.
func (c *cluster) nodeIDs() map[string]*node {
	c.t.Helper()
	rows, err := c.db.Query(`SELECT id, address FROM nodes`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]*node{}
	for rows.Next() {
		var id, addr string
		if err := rows.Scan(&id, &addr); err != nil {
			c.t.Fatal(err)
		}
		for _, n := range c.nodes {
			if n.internal == addr {
				out[id] = n
			}
		}
	}
	return out
}

// sessionStatus is a game session's status in the store.
func (c *cluster) sessionStatus(id string) string {
	var st string
	if err := c.db.QueryRow(`SELECT status FROM game_sessions WHERE id = $1`, id).Scan(&st); err != nil {
		return err.Error()
	}
	return st
}

// fleetState is what a container fleet runs, as the store and the API
// server have it.
type fleetState struct {
	pods, computes, active int
	busy, idle             int  // processes hosting a live session, and ready ones
	matched                bool // every pod's name is a compute of the fleet and the other way round
}

func (c *cluster) fleetGroups(k *podKubelet, fleet string) fleetState {
	c.t.Helper()
	var st fleetState
	computes := map[string]string{}
	rows, err := c.db.Query(`SELECT name, status FROM computes WHERE fleet_id = $1`, fleet)
	if err != nil {
		c.t.Fatal(err)
	}
	for rows.Next() {
		var name, status string
		if err := rows.Scan(&name, &status); err != nil {
			c.t.Fatal(err)
		}
		computes[name] = status
	}
	rows.Close()
	st.computes = len(computes)
	for _, s := range computes {
		if s == "ACTIVE" {
			st.active++
		}
	}
	names := k.names(fleet)
	st.pods = len(names)
	st.matched = len(names) == len(computes)
	for n := range names {
		if _, ok := computes[n]; !ok {
			st.matched = false
		}
	}
	st.busy = c.count(`SELECT COUNT(DISTINCT compute) FROM game_sessions WHERE fleet_id = $1 AND status IN ('ACTIVATING', 'ACTIVE')`, fleet)
	st.idle = c.count(`SELECT COUNT(*) FROM processes WHERE fleet_id = $1 AND status = 'ACTIVE' AND connected = 1 AND game_session_id = ''`, fleet)
	return st
}

// podKubelet is the test as scheduler and kubelets: it binds each pod to a
// node of its instance, runs its game server (a Go SDK process with the
// pod's environment, its auth token read from the Secret as a kubelet
// reads it), reports it Running, and, when the pod is deleted, ends the
// process and removes the pod. It counts the pods not being deleted, and
// the most there were at once.
type podKubelet struct {
	t  *testing.T
	cs kubernetes.Interface
	ns string

	mu      sync.Mutex
	started map[string]*sdk.Process // by pod name; nil while starting
	live    map[string]string       // pods not being deleted: name → fleet
	max     int                     // the most pods of one fleet at once
	heard   []string                // what its pod watch told, and its errors, for a failure's log
	handled map[string]string       // the resource version of each pod last handled, by name
	untold  map[string]string       // pods a list found that the watch has not told of since
	inf     cache.SharedIndexInformer
}

// hear notes what the pod watch told, with the time, for a failure's log.
func (k *podKubelet) hear(format string, args ...any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.heard = append(k.heard, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

// logHeard writes what the pod watch told and where it stands.
func (k *podKubelet) logHeard(t *testing.T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t.Logf("the test's kubelet: pod watch synced %v at resource version %q; %d things heard:",
		k.inf.HasSynced(), k.inf.LastSyncResourceVersion(), len(k.heard))
	for _, h := range k.heard {
		t.Log("  " + h)
	}
}

func startPodKubelet(t *testing.T, cs kubernetes.Interface, ns string) *podKubelet {
	k := &podKubelet{t: t, cs: cs, ns: ns, started: map[string]*sdk.Process{}, live: map[string]string{}, handled: map[string]string{}, untold: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	k.inf = inf
	const listed = "listed before the watch told of it:"
	handle := func(what string, obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			k.hear("%s pod %s (resource version %s, node %q)", what, p.Name, p.ResourceVersion, p.Spec.NodeName)
			k.mu.Lock()
			k.handled[p.Name] = p.ResourceVersion
			if what == listed {
				k.untold[p.Name] = p.ResourceVersion
			} else {
				delete(k.untold, p.Name) // the watch told of it after all, if late
			}
			k.mu.Unlock()
			k.step(ctx, p)
		}
	}
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		k.hear("watch error: %v", err)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handle("added", obj) },
		UpdateFunc: func(_, obj any) { handle("updated", obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				k.hear("deleted pod %s", p.Name)
				k.mu.Lock()
				k.handled[p.Name] = "deleted"
				k.mu.Unlock()
				k.gone(p.Name)
			}
		}}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	// As a kubelet does, it also lists its pods now and then: a pod the
	// watch has not told of (in two of three full CI runs the watch never
	// told of the first three pods, alone it always did) is handled from
	// the list, and one the watch never tells of is logged at the end.
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range pods.Items {
				p := &pods.Items[i]
				k.mu.Lock()
				seen, ok := k.handled[p.Name]
				k.mu.Unlock()
				// Only what is newer than the watch told: a list that
				// took its time may hold a pod older than an event
				// handled meanwhile, or one deleted since.
				if !ok || (seen != "deleted" && newerVersion(p.ResourceVersion, seen)) {
					handle(listed, p)
				}
			}
		}
	}()
	// The pods are made after this returns: a pod watch not yet listing
	// (its first list refused while the API server warms up, say, and
	// retried after a back-off) would see them only late.
	syncCtx, synced := context.WithTimeout(ctx, 60*time.Second)
	defer synced()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		cancel()
		t.Fatal("the test's kubelet: its pod watch did not list the namespace's pods within 60 s")
	}
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
		k.mu.Lock()
		defer k.mu.Unlock()
		for name, rv := range k.untold {
			t.Logf("the pod watch never told of pod %s at resource version %s or later; a list did", name, rv)
		}
		for _, p := range k.started {
			if p != nil {
				p.Destroy()
			}
		}
	})
	return k
}

func (k *podKubelet) gone(name string) {
	k.mu.Lock()
	p := k.started[name]
	delete(k.live, name)
	k.mu.Unlock()
	if p != nil {
		p.Destroy()
	}
}

func (k *podKubelet) step(ctx context.Context, p *corev1.Pod) {
	fail := func(err error) {
		if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			k.t.Errorf("kubelet, pod %s: %v", p.Name, err)
		}
	}
	if p.DeletionTimestamp != nil {
		k.gone(p.Name)
		go fail(k.cs.CoreV1().Pods(k.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
		return
	}
	k.mu.Lock()
	if k.handled[p.Name] == "deleted" { // a list's older view of a pod since deleted
		k.mu.Unlock()
		return
	}
	if _, ok := k.live[p.Name]; !ok {
		fleet := p.Labels[kube.LabelFleet]
		k.live[p.Name] = fleet
		k.max = max(k.max, k.count(fleet))
	}
	_, started := k.started[p.Name]
	if p.Spec.NodeName != "" && !started {
		k.started[p.Name] = nil
	}
	k.mu.Unlock()
	if p.Spec.NodeName == "" {
		go fail(k.bind(ctx, p))
		return
	}
	if !started {
		go fail(k.start(ctx, p))
	}
}

// bind binds a pod to the node of its instance, made the first time.
func (k *podKubelet) bind(ctx context.Context, p *corev1.Pod) error {
	name := "node-" + p.Labels[kube.LabelInstance]
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}}}
	if _, err := k.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return k.cs.CoreV1().Pods(k.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: name}}, metav1.CreateOptions{})
}

// start runs a bound pod's game server and reports the pod Running.
func (k *podKubelet) start(ctx context.Context, p *corev1.Pod) error {
	ct := p.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range ct.Env {
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
	// A game server whose InitSDK fails exits, and its container is
	// started again (restartPolicy Always): while its fleet has no live
	// owner, say.
	var proc *sdk.Process
	for attempt := 1; ; attempt++ {
		var err error
		proc, err = sdk.Init(sdk.ServerParameters{WebSocketURL: env[sdk.EnvWebSocketURL], ProcessID: fmt.Sprintf("%s-%d", p.Name, attempt),
			HostID: env[sdk.EnvHostID], FleetID: env[sdk.EnvFleetID], AuthToken: env[sdk.EnvAuthToken]}, sdk.Options{
			Getenv: func(string) string { return "" }, Exit: func(int) {},
			HealthCheckInterval: 2 * time.Second, HealthCheckJitter: time.Millisecond,
			ReconnectMin: 50 * time.Millisecond, ReconnectMax: 500 * time.Millisecond, DrainTimeout: 200 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err == nil {
			break
		}
		k.mu.Lock()
		_, still := k.started[p.Name]
		k.mu.Unlock()
		if !still {
			return nil
		}
		if attempt == 100 {
			return fmt.Errorf("the game server's InitSDK, %d times: %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond): // the kubelet's back-off before a restart
		}
	}
	k.mu.Lock()
	_, still := k.started[p.Name]
	if still {
		k.started[p.Name] = proc
	}
	k.mu.Unlock()
	if !still {
		proc.Destroy()
		return nil
	}
	err := proc.ProcessReady(sdk.ProcessParameters{Port: int(ct.Ports[0].ContainerPort),
		OnStartGameSession: func(sdk.GameSession) { go proc.ActivateGameSession() },
		OnProcessTerminate: func() {},
	})
	if err != nil {
		return fmt.Errorf("the game server's ProcessReady: %w", err)
	}
	now := metav1.Now()
	p = p.DeepCopy()
	p.Status.Phase, p.Status.HostIP, p.Status.PodIP = corev1.PodRunning, "127.0.0.1", "127.0.0.1"
	p.Status.HostIPs, p.Status.PodIPs = []corev1.HostIP{{IP: "127.0.0.1"}}, []corev1.PodIP{{IP: "127.0.0.1"}}
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ct.Name, Image: ct.Image, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	for {
		_, err = k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
		cur, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = p.Status
		p = cur
	}
}

// names are a fleet's pods not being deleted.
func (k *podKubelet) names(fleet string) map[string]bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]bool{}
	for n, f := range k.live {
		if f == fleet {
			out[n] = true
		}
	}
	return out
}

// count is the number of a fleet's pods not being deleted; k.mu is held.
func (k *podKubelet) count(fleet string) int {
	n := 0
	for _, f := range k.live {
		if f == fleet {
			n++
		}
	}
	return n
}

func (k *podKubelet) resetMax(fleet string) {
	k.mu.Lock()
	k.max = k.count(fleet)
	k.mu.Unlock()
}

func (k *podKubelet) maxLive() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.max
}

// newerVersion reports whether resource version a is after b. The API
// server's versions are etcd revisions, so decimal integers here.
func newerVersion(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
}
