// Package kube runs container fleets on a Kubernetes cluster: a controller
// that turns each ACTIVE container fleet's wanted capacity into pods, one
// per game server container group, and keeps Anylift's record of them (the
// fleet's computes) in step with the pods' lives.
//
// For a fleet it keeps, in its namespace:
//   - a ConfigMap named after the fleet, owner of everything below, so that
//     deleting it (or the controller deleting it with the fleet) takes them
//     with it;
//   - per game server container group, a Secret holding the auth token its
//     game server connects with, and a pod: the group's containers, each
//     container port published on its connection port (hostPort), the game
//     server container given the GAMELIFT_SDK_* variables the server SDKs
//     read in InitSDK().
//
// Pods are labelled with their fleet, definition and version, instance and
// group slot. The controller reconciles every fleet on a short interval
// and whenever a pod of a fleet changes; it creates the missing groups,
// removes surplus ones that host no game session first, and then busy ones
// only when every session they host is ACTIVE without protection
// (GameLift's NoProtection), telling their server processes first and
// deleting the pod once they have ended or their 5 minutes are up
// (containers.Service.TerminateContainerGroup, FinishContainerGroup),
// recycles the groups of nodes taken out of service when it watches nodes
// (recycle.go), replaces idle groups of an older definition
// version, replaces pods that failed or that the cluster takes away (a
// node lost, shut down, drained or short of memory: the fleet event
// GameLift records for each, see cause), and deregisters groups whose pod
// is gone.
//
// With fleet ownership (Config.Owners, RunOwned), every node runs a
// controller and each reconciles the fleets it owns.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// Labels of the objects the controller makes.
const (
	LabelFleet        = "anylift/fleet"
	LabelGroup        = "anylift/container-group"
	LabelGroupVersion = "anylift/container-group-version"
	LabelInstance     = "anylift/instance"
	LabelSlot         = "anylift/slot"
)

// tokenKey is the key of the auth token in a group's Secret.
const tokenKey = "auth-token"

// Client is what the controller asks of the API server: the core group
// (pods, Secrets, ConfigMaps) and the coordination group (the Lease). A
// *kubernetes.Clientset is one; so is NewClient's, which links in no
// other group.
type Client interface {
	CoreV1() corev1client.CoreV1Interface
	CoordinationV1() coordinationv1client.CoordinationV1Interface
}

// NewClient returns a Client for the API server of rc.
func NewClient(rc *rest.Config) (Client, error) {
	core, err := corev1client.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	coord, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return clients{core, coord}, nil
}

type clients struct {
	core  corev1client.CoreV1Interface
	coord coordinationv1client.CoordinationV1Interface
}

func (c clients) CoreV1() corev1client.CoreV1Interface                         { return c.core }
func (c clients) CoordinationV1() coordinationv1client.CoordinationV1Interface { return c.coord }

// Config configures a Controller.
type Config struct {
	Client    Client
	Namespace string
	Service   *containers.Service
	// SDKEndpoint is the WebSocket URL game servers in the pods reach
	// Anylift's process endpoint at (GAMELIFT_SDK_WEBSOCKET_URL).
	SDKEndpoint string
	// Interval is how often every fleet is reconciled even when no pod
	// changed (2 s when zero): what picks up capacity changes made on
	// other nodes (those made on this node's Service bring a
	// reconciliation at once).
	Interval time.Duration
	// Workers bounds the API calls in flight for one reconciliation (16
	// when zero).
	Workers int
	// CallTimeout bounds each call to the API server (30 s when zero): a
	// call never answered (a connection lost without a reset, a server
	// stalled) fails, and the next reconciliation tries again, rather
	// than holding this one, and every fleet's, for ever.
	CallTimeout time.Duration
	// Owners is the node's view of the fleets it owns, when it takes part
	// in fleet ownership (several nodes on PostgreSQL with
	// --fleet-ownership; RunOwned). Nil: the controller acts for every
	// fleet, and runs on one node at a time (RunElected).
	Owners Owners
	// WatchNodes has the controller watch the cluster's nodes (list and
	// watch nodes: a ClusterRole), to recycle the game server container
	// groups of a node being taken out of service ahead of time, cordoned
	// or marked by an autoscaler (INSTANCE_RECYCLED; recycle.go). Without
	// it the controller needs no right outside its namespace, and hears
	// of such a node only when its pods are evicted.
	WatchNodes bool
	Log        *slog.Logger
}

// Owners is what the controller asks of the node's view of fleet
// ownership (an *owners.Map is one).
type Owners interface {
	// Fencing reports whether ownership is in force: every fleet write
	// is then refused to every node but the fleet's owner.
	Fencing() bool
	// Held returns the epoch at which this node holds fleetID's lease.
	Held(fleetID string) (int64, bool)
}

// Controller runs container fleets as pods.
type Controller struct {
	cfg     Config
	pods    corelisters.PodNamespaceLister
	configs corelisters.ConfigMapNamespaceLister
	nodes   corelisters.NodeLister // nil without WatchNodes
	kick    chan struct{}
	// elected: this node holds the Lease (RunOwned).
	elected atomic.Bool

	mu sync.Mutex
	// expected holds pods created or deleted whose change the informer
	// has not shown yet, so that a reconciliation does not count them
	// wrong.
	expected map[string]expectation
	// running remembers the address each pod was reported running at.
	running map[string]string
	// gone holds the last state of pods deleted by others, as the
	// informer reported them, for the reconciliation that finds their
	// group without a pod: what it says decides the event.
	gone map[string]*corev1.Pod
	// missing holds the groups found without a pod, and without a
	// deletion seen, at the last reconciliation: the informer updates
	// its cache before it reports a deletion, so such a group is
	// deregistered only when the next reconciliation still finds it so.
	missing map[string]bool
}

// expectation is a pod created (with its place) or deleted, not yet seen
// so by the informer.
type expectation struct {
	created        bool
	fleet          string
	instance, slot int
}

// New returns a controller; Run starts it.
func New(cfg Config) *Controller {
	if cfg.Interval == 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Workers == 0 {
		cfg.Workers = 16
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Controller{cfg: cfg, kick: make(chan struct{}, 1), expected: map[string]expectation{}, running: map[string]string{},
		gone: map[string]*corev1.Pod{}, missing: map[string]bool{}}
}

// Run watches the namespace's pods and config maps of fleets and
// reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	rc := c.cfg.Client.CoreV1().RESTClient()
	fleetsOnly := func(o *metav1.ListOptions) { o.LabelSelector = LabelFleet }
	podInf := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(rc, "pods", c.cfg.Namespace, fleetsOnly),
		&corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	cmInf := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(rc, "configmaps", c.cfg.Namespace, fleetsOnly),
		&corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.seen(obj, true) },
		UpdateFunc: func(_, obj any) { c.seen(obj, true) },
		DeleteFunc: func(obj any) { c.seen(obj, false) },
	}
	if _, err := podInf.AddEventHandler(handler); err != nil {
		return err
	}
	c.pods = corelisters.NewPodLister(podInf.GetIndexer()).Pods(c.cfg.Namespace)
	c.configs = corelisters.NewConfigMapLister(cmInf.GetIndexer()).ConfigMaps(c.cfg.Namespace)
	informers := []cache.SharedIndexInformer{podInf, cmInf}
	if c.cfg.WatchNodes {
		nodeInf := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(rc, "nodes", metav1.NamespaceAll, func(*metav1.ListOptions) {}),
			&corev1.Node{}, 0, cache.Indexers{})
		if _, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.nodeSeen(nil, obj) },
			UpdateFunc: func(old, obj any) { c.nodeSeen(old, obj) },
		}); err != nil {
			return err
		}
		c.nodes = corelisters.NewNodeLister(nodeInf.GetIndexer())
		informers = append(informers, nodeInf)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
		wg.Add(1)
		go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("kube: the caches of pods, config maps and nodes did not sync")
	}
	c.cfg.Log.Info("container fleet controller running", "namespace", c.cfg.Namespace)
	tick := time.NewTicker(c.cfg.Interval)
	defer tick.Stop()
	for {
		// Taken before the reconciliation reads the fleets, so that a
		// change of capacity made while it runs brings another at once.
		changed := c.cfg.Service.CapacityChanged()
		if err := c.reconcile(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Log.Warn("reconciling container fleets", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-c.kick:
		case <-changed:
		}
	}
}

// call bounds one call to the API server by CallTimeout.
func (c *Controller) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.CallTimeout)
}

// Kick asks for a reconciliation now (a fleet this node has come to own).
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// acts reports whether this node reconciles fleetID now: with fleet
// ownership in force, the fleets it owns; otherwise (ownership off, or not
// in force while a node that takes no part in it is live) every fleet, on
// the node that runs the controller alone (RunElected) or holds the Lease
// (RunOwned).
func (c *Controller) acts(fleetID string) bool {
	o := c.cfg.Owners
	if o == nil {
		return true
	}
	if o.Fencing() {
		_, ok := o.Held(fleetID)
		return ok
	}
	return c.elected.Load()
}

// tidies reports whether this node removes what fleetID left, a fleet
// that no longer runs: its owner, or the node holding the Lease (a
// deleted fleet has no owner).
func (c *Controller) tidies(fleetID string) bool {
	if c.cfg.Owners == nil || c.elected.Load() {
		return true
	}
	return c.acts(fleetID)
}

// seen notes a pod the informer reports (present or deleted) and asks
// for a reconciliation.
func (c *Controller) seen(obj any, present bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if p, ok := obj.(*corev1.Pod); ok {
		c.mu.Lock()
		want, expected := c.expected[p.Name]
		if expected && want.created == present {
			delete(c.expected, p.Name)
		}
		if !present {
			delete(c.running, p.Name)
			if !expected || want.created {
				c.gone[p.Name] = p
			}
		}
		c.mu.Unlock()
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// reconcile brings every fleet's pods in line with what Anylift says it
// runs, and removes what fleets that are gone left.
func (c *Controller) reconcile(ctx context.Context) error {
	runs, err := c.cfg.Service.ContainerFleetRuns(ctx)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	known := map[string]bool{}
	missing := map[string]bool{}
	var errs []error
	for _, r := range runs {
		live[r.Fleet.ID] = true
		for name := range r.Computes {
			known[name] = true
		}
		if !c.acts(r.Fleet.ID) {
			continue
		}
		if err := c.reconcileFleet(ctx, r, missing); err != nil {
			errs = append(errs, fmt.Errorf("fleet %s: %w", r.Fleet.ID, err))
		}
	}
	// What was deleted and is no group (any more) is of no use: a group
	// deregistered this time goes from the next.
	c.mu.Lock()
	for name := range c.gone {
		if !known[name] {
			delete(c.gone, name)
		}
	}
	c.missing = missing
	c.mu.Unlock()
	owners, err := c.configs.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, cm := range owners {
		if id := cm.Labels[LabelFleet]; !live[id] && c.tidies(id) {
			if err := c.teardown(ctx, id, cm); err != nil {
				errs = append(errs, fmt.Errorf("fleet %s: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// group is one pod of a fleet as the reconciliation sees it.
type group struct {
	pod            *corev1.Pod
	instance, slot int
	outdated       bool
}

// reconcileFleet brings one fleet's pods in line. It adds to missing the
// groups it finds without a pod and without a deletion seen.
func (c *Controller) reconcileFleet(ctx context.Context, r *containers.ContainerFleetRun, missing map[string]bool) error {
	f := r.Fleet
	owner, err := c.owner(ctx, f)
	if err != nil {
		return err
	}
	pods, err := c.pods.List(labels.SelectorFromSet(labels.Set{LabelFleet: f.ID}))
	if err != nil {
		return err
	}
	version := strconv.Itoa(r.GameServer.Version)
	var live, leaving []group
	podNames := map[string]bool{}
	c.mu.Lock()
	pending := map[string]expectation{}
	for name, e := range c.expected {
		if e.fleet == f.ID || !e.created {
			pending[name] = e
		}
	}
	wasMissing := map[string]bool{}
	gone := map[string]*corev1.Pod{}
	for name := range r.Computes {
		wasMissing[name] = c.missing[name]
		if p := c.gone[name]; p != nil {
			gone[name] = p
		}
	}
	c.mu.Unlock()
	var errs []error
	for _, p := range pods {
		podNames[p.Name] = true
		if e, ok := pending[p.Name]; ok && !e.created {
			continue // being deleted by the controller
		}
		if p.DeletionTimestamp != nil {
			// Being deleted by another: when the cluster says why (its
			// node lost, drained), the group is deregistered now, its
			// sessions ended, rather than when the pod is gone, which on
			// a lost node may take long. It is replaced meanwhile.
			if code, why := cause(p); code != "" && r.Computes[p.Name] != nil {
				errs = append(errs, c.stopped(ctx, f.ID, p, code, why, false))
			}
			continue
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			code, why := cause(p)
			errs = append(errs, c.stopped(ctx, f.ID, p, code, why, true))
			continue
		}
		if r.Computes[p.Name] == nil {
			// A pod Anylift does not know (removed as idle while its
			// deletion failed, or a store that was reset): its game
			// server cannot connect. Asked of the store again first:
			// with fleet ownership, a node that has just lost the fleet
			// may see a group its new owner registered after this
			// reconciliation read the fleet (a compute is registered
			// before its pod is made, so the read sees it).
			if known, err := c.cfg.Service.ContainerComputeKnown(ctx, f.ID, p.Name); err != nil || known {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, c.removePod(ctx, p.Name))
			continue
		}
		g := group{pod: p, outdated: p.Labels[LabelGroupVersion] != version || p.Labels[LabelGroup] != r.GameServer.Name}
		g.instance, _ = strconv.Atoi(p.Labels[LabelInstance])
		g.slot, _ = strconv.Atoi(p.Labels[LabelSlot])
		if r.Computes[p.Name].Status == game.ComputeTerminating {
			// Removed by a scale-down while it hosts game sessions:
			// its processes were told to end; it keeps its place,
			// and counts no more, until they have.
			leaving = append(leaving, g)
			continue
		}
		live = append(live, g)
		if err := c.reportRunning(ctx, f.ID, p); err != nil {
			errs = append(errs, err)
		}
	}
	// Groups created and not seen yet count as live, in their places.
	taken := map[[2]int]bool{}
	for _, g := range leaving {
		taken[[2]int{g.instance, g.slot}] = true
	}
	pendingCount := 0
	for name, e := range pending {
		if e.created && !podNames[name] {
			pendingCount++
			taken[[2]int{e.instance, e.slot}] = true
		}
	}
	// Computes whose pod is gone: deregistered (their sessions end), with
	// the event its last state calls for, their Secret deleted.
	onServer, err := c.stillOnServer(ctx, f.ID, r, podNames, pending, gone, wasMissing)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for name := range r.Computes {
		if _, ok := pending[name]; podNames[name] || ok {
			continue
		}
		p := gone[name]
		if p == nil && (!wasMissing[name] || onServer[name]) {
			// Perhaps a deletion not reported yet, or a pod made by
			// this fleet's previous owner (fleet ownership) that this
			// node's watch has not shown yet: the group keeps its place
			// until the next reconciliation, so that it is not made
			// twice. Missing twice, it is looked for on the API server
			// itself (stillOnServer): a watch that lags behind does not
			// make a group be taken for gone.
			missing[name] = true
			if i, s, ok := placeOf(f.ID, name); ok {
				taken[[2]int{i, s}] = true
				pendingCount++
			}
			continue
		}
		if p != nil {
			if code, why := cause(p); code != "" {
				errs = append(errs, c.stopped(ctx, f.ID, p, code, why, false))
				continue
			}
		}
		errs = append(errs, c.cfg.Service.RemoveContainerCompute(ctx, f.ID, name), c.deleteSecret(ctx, name))
	}

	// Groups on a node being taken out of service: recycled, the idle
	// ones at once (replaced below), the busy ones once idle.
	live, recycled := c.recycle(ctx, r, live)
	errs = append(errs, recycled...)

	want := 0
	for _, cp := range f.Capacity {
		want += cp.Desired
	}
	perInstance := max(f.Container.GroupsPerInstance, 1)
	want *= perInstance
	have := len(live) + pendingCount

	// Surplus first: idle groups go, the highest instance first, outdated
	// ones before current ones; then, if there are still too many, busy
	// ones whose game sessions a scale-down may end (all ACTIVE, without
	// protection), the highest instance first. Other busy ones stay.
	sort.Slice(live, func(i, j int) bool {
		if live[i].outdated != live[j].outdated {
			return live[i].outdated
		}
		if live[i].instance != live[j].instance {
			return live[i].instance > live[j].instance
		}
		return live[i].slot > live[j].slot
	})
	var keep, doomed []group
	for _, g := range live {
		if (have > want || g.outdated) && !r.Busy[g.pod.Name] {
			doomed = append(doomed, g)
			have--
			continue
		}
		keep = append(keep, g)
	}
	idle := len(doomed)
	if have > want {
		var busy []group
		for _, g := range keep {
			if have > want && r.Unprotected[g.pod.Name] {
				doomed = append(doomed, g)
				have--
				continue
			}
			busy = append(busy, g)
		}
		keep = busy
	}
	// An idle group goes at once; a busy one is told to end first
	// (TerminateContainerGroup), its pod removed once its processes have
	// ended or their time is up (finish, below, at a later pass).
	removed := make([]bool, len(doomed))
	errs = append(errs, c.parallel(len(doomed), func(i int) error {
		name := doomed[i].pod.Name
		if i >= idle {
			ok, err := c.cfg.Service.TerminateContainerGroup(ctx, f.ID, name)
			if err == nil && ok {
				removed[i] = true
				c.cfg.Log.Info("scale-down is removing a game server container group hosting unprotected game sessions: its server processes are told to end",
					"fleet", f.ID, "group", name)
			}
			return err // not ok: protected (or activating) since, it stays
		}
		ok, err := c.cfg.Service.RemoveIdleContainerCompute(ctx, f.ID, name)
		if err != nil || !ok {
			return err // busy since: it stays
		}
		removed[i] = true
		return c.removePod(ctx, name)
	})...)
	for i, g := range doomed {
		switch {
		case !removed[i]:
			keep = append(keep, g)
			have++
		case i >= idle:
			taken[[2]int{g.instance, g.slot}] = true // leaving
		}
	}
	errs = append(errs, c.parallel(len(leaving), func(i int) error { return c.finish(ctx, f.ID, leaving[i].pod.Name) })...)

	// Then the missing groups, in the free (instance, slot) places from
	// the lowest.
	for _, g := range keep {
		taken[[2]int{g.instance, g.slot}] = true
	}
	var places [][2]int
	for i := 0; len(places) < want-have; i++ {
		for s := 0; s < perInstance && len(places) < want-have; s++ {
			if !taken[[2]int{i, s}] {
				places = append(places, [2]int{i, s})
			}
		}
	}
	errs = append(errs, c.parallel(len(places), func(i int) error {
		return c.createGroup(ctx, r, owner, places[i][0], places[i][1])
	})...)
	return errors.Join(errs...)
}

// finish removes the pod of a group being removed (TERMINATING) once
// Anylift has let it go: its server processes ended, or their time up.
func (c *Controller) finish(ctx context.Context, fleetID, name string) error {
	done, err := c.cfg.Service.FinishContainerGroup(ctx, fleetID, name)
	if err != nil || !done {
		return err
	}
	c.cfg.Log.Info("a game server container group removed by a scale-down has ended", "fleet", fleetID, "group", name)
	return c.removePod(ctx, name)
}

// stillOnServer returns, of the fleet's groups that the last
// reconciliation already found without a pod and without a deletion seen
// and this one finds so again, those whose pod the API server still has:
// one list of the fleet's pods, asked of the server rather than the
// watch's cache, and only when there are such groups.
func (c *Controller) stillOnServer(ctx context.Context, fleetID string, r *containers.ContainerFleetRun, podNames map[string]bool,
	pending map[string]expectation, gone map[string]*corev1.Pod, wasMissing map[string]bool) (map[string]bool, error) {
	ask := false
	for name := range r.Computes {
		if _, ok := pending[name]; !ok && !podNames[name] && gone[name] == nil && wasMissing[name] {
			ask = true
			break
		}
	}
	if !ask {
		return nil, nil
	}
	ctx, cancel := c.call(ctx)
	defer cancel()
	list, err := c.cfg.Client.CoreV1().Pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelFleet + "=" + fleetID})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of groups the watch has not shown: %w", err)
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = true
		}
	}
	return out, nil
}

// parallel runs fn(0..n-1) on at most Workers goroutines and returns the
// errors.
func (c *Controller) parallel(n int, fn func(int) error) []error {
	errs := make([]error, n)
	sem := make(chan struct{}, c.cfg.Workers)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

// reportRunning tells Anylift a pod runs, at its node's address (where
// its host ports are), once per address.
func (c *Controller) reportRunning(ctx context.Context, fleetID string, p *corev1.Pod) error {
	ip := p.Status.HostIP
	if p.Status.Phase != corev1.PodRunning || ip == "" {
		return nil
	}
	c.mu.Lock()
	done := c.running[p.Name] == ip
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.cfg.Service.ContainerComputeRunning(ctx, fleetID, p.Name, ip); err != nil {
		if game.IsKind(err, game.NotFound) {
			return nil // removed meanwhile
		}
		return err
	}
	c.mu.Lock()
	c.running[p.Name] = ip
	c.mu.Unlock()
	return nil
}

// stopped handles a group whose pod stopped or is taken away: the event
// (code and why from cause; GAME_SERVER_CONTAINER_GROUP_CRASHED when
// code is ""), the compute deregistered, the Secret deleted, and the pod
// too when remove says so (a replacement follows as a missing group).
func (c *Controller) stopped(ctx context.Context, fleetID string, p *corev1.Pod, code, why string, remove bool) error {
	instance := fleetID + "-" + p.Labels[LabelInstance]
	msg := stopMessage(p, instance, code, why)
	if code == "" {
		code = wire.EventCodeGameServerContainerGroupCrashed
	}
	if err := c.cfg.Service.ContainerGroupStopped(ctx, fleetID, p.Name, code, msg); err != nil {
		return err
	}
	c.cfg.Log.Info("game server container group stopped", "fleet", fleetID, "group", p.Name, "event", code, "message", msg)
	if remove {
		return c.removePod(ctx, p.Name)
	}
	return c.deleteSecret(ctx, p.Name)
}

// removePod deletes a group's pod and its Secret.
func (c *Controller) removePod(ctx context.Context, name string) error {
	c.mu.Lock()
	c.expected[name] = expectation{}
	c.mu.Unlock()
	cctx, cancel := c.call(ctx)
	err := c.cfg.Client.CoreV1().Pods(c.cfg.Namespace).Delete(cctx, name, metav1.DeleteOptions{})
	cancel()
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.expected, name) // no deletion to see
		c.mu.Unlock()
		err = nil
	}
	return errors.Join(err, c.deleteSecret(ctx, name))
}

// deleteSecret deletes a group's Secret.
func (c *Controller) deleteSecret(ctx context.Context, name string) error {
	ctx, cancel := c.call(ctx)
	defer cancel()
	err := c.cfg.Client.CoreV1().Secrets(c.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// owner returns the fleet's ConfigMap, making it the first time.
func (c *Controller) owner(ctx context.Context, f *game.Fleet) (*corev1.ConfigMap, error) {
	if cm, err := c.configs.Get(f.ID); err == nil {
		return cm, nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: f.ID, Labels: map[string]string{LabelFleet: f.ID}},
		Data:       map[string]string{"fleetArn": f.ARN},
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	got, err := c.cfg.Client.CoreV1().ConfigMaps(c.cfg.Namespace).Create(cctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Made moments ago and not in the cache yet (the next
		// reconciliation finds it there), or made by another without
		// the label: either way, not read here, which would take a
		// right the controller otherwise does without.
		return nil, fmt.Errorf("config map %s exists and is not labelled %s=%s, or not seen yet", f.ID, LabelFleet, f.ID)
	}
	return got, err
}

// teardown removes what a fleet that no longer runs left: its pods, their
// Secrets and its ConfigMap. (A cluster's garbage collector would remove
// the first two with the last; the controller does not count on one.)
func (c *Controller) teardown(ctx context.Context, fleetID string, cm *corev1.ConfigMap) error {
	// Asked of the store again: with fleet ownership, a fleet created
	// after this reconciliation read the fleets may already have its
	// ConfigMap, made by its owner.
	if stopped, err := c.cfg.Service.ContainerFleetStopped(ctx, fleetID); err != nil || !stopped {
		return err
	}
	pods, err := c.pods.List(labels.SelectorFromSet(labels.Set{LabelFleet: fleetID}))
	if err != nil {
		return err
	}
	errs := c.parallel(len(pods), func(i int) error {
		p := pods[i]
		if err := c.cfg.Service.RemoveContainerCompute(ctx, fleetID, p.Name); err != nil {
			return err
		}
		return c.removePod(ctx, p.Name)
	})
	if len(pods) > 0 {
		err := errors.Join(errs...)
		if _, ok := errors.AsType[*store.NotOwner](err); ok {
			return nil // a fleet that still exists: its owner's to tidy
		}
		return err
	}
	lctx, cancel := c.call(ctx)
	secrets, err := c.cfg.Client.CoreV1().Secrets(c.cfg.Namespace).List(lctx, metav1.ListOptions{LabelSelector: LabelFleet + "=" + fleetID})
	cancel()
	if err != nil {
		return err
	}
	for _, s := range secrets.Items {
		errs = append(errs, c.deleteSecret(ctx, s.Name))
	}
	dctx, cancel := c.call(ctx)
	err = c.cfg.Client.CoreV1().ConfigMaps(c.cfg.Namespace).Delete(dctx, cm.Name, metav1.DeleteOptions{})
	cancel()
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
