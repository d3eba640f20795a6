package kube_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/kube"
	"github.com/anylift/anylift/internal/kubetest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

var chatBin string

func TestMain(m *testing.M) {
	os.Exit(exectest.Main(m, map[string]*string{"examples/chat": &chatBin}))
}

// freePort is a TCP port free on 127.0.0.1 now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// world is a real API server (with the test as scheduler and kubelets),
// an Anylift server, and the controller between them.
type world struct {
	t       testing.TB
	cluster *kubetest.Cluster
	ns      string
	api     *apitest.Env
	gl      *gamelift.Client
	kubelet *kubelet
}

func newWorld(t testing.TB, cluster *kubetest.Cluster, opts ...apitest.Option) *world {
	return newWorldWith(t, cluster, func(*kube.Config) {}, opts...)
}

// newWorldWith is newWorld with the controller's configuration changed by
// configure.
func newWorldWith(t testing.TB, cluster *kubetest.Cluster, configure func(*kube.Config), opts ...apitest.Option) *world {
	w := &world{t: t, cluster: cluster, ns: cluster.Namespace(t)}
	w.api = apitest.Start(t, opts...)
	w.gl = w.api.Client()
	w.kubelet = startKubelet(t, cluster.Client, w.ns, chatBin)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := kube.Config{Client: cluster.Client, Namespace: w.ns, Service: w.api.Server.Containers(),
		SDKEndpoint: w.api.Server.SDKEndpoint(), Interval: 100 * time.Millisecond}
	configure(&cfg)
	ctl := kube.New(cfg)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	return w
}

func (w *world) pods(fleet string) []corev1.Pod {
	w.t.Helper()
	list, err := w.cluster.Client.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
	if err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// livePods are the fleet's pods not being deleted.
func (w *world) livePods(fleet string) []corev1.Pod {
	var live []corev1.Pod
	for _, p := range w.pods(fleet) {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// groups waits until the fleet has n ACTIVE game server container groups
// hosting sessions and m IDLE ones, with as many server processes ready
// or busy and n+m pods (not counting pods being deleted).
func (w *world) groups(fleet string, active, idle int) {
	w.t.Helper()
	exectest.Eventually(w.t, fmt.Sprintf("%d busy and %d idle groups", active, idle), 60*time.Second, func() (bool, string) {
		c, err := w.gl.DescribeFleetCapacity(context.Background(), &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
		if err != nil {
			return false, err.Error()
		}
		u, err := w.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
		if err != nil {
			return false, err.Error()
		}
		g := c.FleetCapacity[0].GameServerContainerGroupCounts
		procs := aws.ToInt32(u.FleetUtilization[0].ActiveServerProcessCount)
		pods := len(w.livePods(fleet))
		return aws.ToInt32(g.ACTIVE) == int32(active) && aws.ToInt32(g.IDLE) == int32(idle) && aws.ToInt32(g.PENDING) == 0 &&
				int(procs) == active+idle && pods == active+idle,
			fmt.Sprintf("groups %d busy %d idle %d pending, %d processes, %d pods", aws.ToInt32(g.ACTIVE), aws.ToInt32(g.IDLE), aws.ToInt32(g.PENDING), procs, pods)
	})
}

func (w *world) capacity(fleet string, desired, maxSize int32) {
	w.t.Helper()
	if _, err := w.gl.UpdateFleetCapacity(context.Background(), &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
		DesiredInstances: aws.Int32(desired), MinSize: aws.Int32(0), MaxSize: aws.Int32(maxSize)}); err != nil {
		w.t.Fatal(err)
	}
}

// chatFleet creates the chat definition and a container fleet running it
// with its connection port at port.
func (w *world) chatFleet(port int) string {
	w.t.Helper()
	return chatFleet(w.t, w.gl, port)
}

func chatFleet(tb testing.TB, gl *gamelift.Client, port int) string {
	tb.Helper()
	ctx := context.Background()
	if _, err := gl.CreateContainerGroupDefinition(ctx, &gamelift.CreateContainerGroupDefinitionInput{
		Name: aws.String("chat"), OperatingSystem: types.ContainerOperatingSystemAmazonLinux2023,
		TotalMemoryLimitMebibytes: aws.Int32(256), TotalVcpuLimit: aws.Float64(0.5),
		GameServerContainerDefinition: &types.GameServerContainerDefinitionInput{
			ContainerName: aws.String("chat"), ImageUri: aws.String("registry.example/anylift-chat:1"), ServerSdkVersion: aws.String("5.2.0"),
			PortConfiguration: &types.ContainerPortConfiguration{ContainerPortRanges: []types.ContainerPortRange{
				{FromPort: aws.Int32(7777), ToPort: aws.Int32(7777), Protocol: types.IpProtocolTcp}}},
			EnvironmentOverride: []types.ContainerEnvironment{{Name: aws.String("GAME_MODE"), Value: aws.String("chat")}},
		},
	}); err != nil {
		tb.Fatal(err)
	}
	out, err := gl.CreateContainerFleet(ctx, &gamelift.CreateContainerFleetInput{
		FleetRoleArn: aws.String("arn:aws:iam::123456789012:role/chat"), GameServerContainerGroupDefinitionName: aws.String("chat"),
		InstanceConnectionPortRange: &types.ConnectionPortRange{FromPort: aws.Int32(int32(port)), ToPort: aws.Int32(int32(port))}})
	if err != nil {
		tb.Fatal(err)
	}
	return aws.ToString(out.ContainerFleet.FleetId)
}

// TestControllerRunsFleet takes a container fleet through its life on a
// real API server, with the chat example as its game server: pods for the
// capacity asked, the official way for a game server to connect (the
// GAMELIFT_SDK_* environment), a player joining a session through the
// connection port, scale-down that spares the busy group while its session
// is protected and removes it once it is not, a deleted pod
// and a failed one replaced, and the fleet's removal.
func TestControllerRunsFleet(t *testing.T) {
	cluster := kubetest.Start(t)
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, cluster, opts...)
			ctx := context.Background()
			port := freePort(t)
			fleet := w.chatFleet(port)
			w.capacity(fleet, 2, 3)
			w.groups(fleet, 0, 2)

			// What the pods are.
			pods := w.pods(fleet)
			owner, err := cluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, fleet, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			instances := map[string]bool{}
			for _, p := range pods {
				instances[p.Labels[kube.LabelInstance]] = true
				c := p.Spec.Containers[0]
				env := map[string]corev1.EnvVar{}
				for _, e := range c.Env {
					env[e.Name] = e
				}
				if p.Labels[kube.LabelGroup] != "chat" || p.Labels[kube.LabelGroupVersion] != "1" || p.Labels[kube.LabelSlot] != "0" ||
					len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != owner.UID ||
					len(c.Ports) != 1 || c.Ports[0].ContainerPort != 7777 || c.Ports[0].HostPort != int32(port) ||
					env[sdk.EnvFleetID].Value != fleet || env[sdk.EnvHostID].Value != p.Name || env[sdk.EnvProcessID].Value != sdk.ManagedResource ||
					env[sdk.EnvWebSocketURL].Value != w.api.Server.SDKEndpoint() || env["GAME_MODE"].Value != "chat" ||
					env[sdk.EnvAuthToken].Value != "" || env[sdk.EnvAuthToken].ValueFrom == nil || c.Resources.Limits.Memory().Value() != 256<<20 {
					t.Errorf("pod %s: labels %v owners %v ports %v env %v resources %v", p.Name, p.Labels, p.OwnerReferences, c.Ports, c.Env, c.Resources)
				}
			}
			if !instances["0"] || !instances["1"] {
				t.Errorf("instances %v, want 0 and 1", instances)
			}

			// A player plays, through the connection port of the node.
			gs, err := w.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(2)})
			if err != nil {
				t.Fatal(err)
			}
			if ip := aws.ToString(gs.GameSession.IpAddress); aws.ToInt32(gs.GameSession.Port) != int32(port) || (ip != hostIP(0) && ip != hostIP(1)) {
				t.Fatalf("session at %s:%d, want a node's address and port %d", ip, aws.ToInt32(gs.GameSession.Port), port)
			}
			exectest.Eventually(t, "the session to be ACTIVE", 30*time.Second, func() (bool, string) {
				d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
				if err != nil {
					return false, err.Error()
				}
				return d.GameSessions[0].Status == types.GameSessionStatusActive, string(d.GameSessions[0].Status)
			})
			ps, err := w.gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String("ada")})
			if err != nil {
				t.Fatal(err)
			}
			player, err := net.Dial("tcp", net.JoinHostPort(aws.ToString(gs.GameSession.IpAddress), strconv.Itoa(port)))
			if err != nil {
				t.Fatal(err)
			}
			defer player.Close()
			fmt.Fprintf(player, "%s\n", aws.ToString(ps.PlayerSession.PlayerSessionId))
			player.SetReadDeadline(time.Now().Add(30 * time.Second))
			if line, err := bufio.NewReader(player).ReadString('\n'); err != nil || line != "OK\n" {
				t.Fatalf("joining: %q %v", line, err)
			}
			w.groups(fleet, 1, 1)

			// Scale down to nothing: the busy group stays while its
			// session is protected, and goes, the session ended, once
			// it is not (GameLift's NoProtection lets a scale-down end
			// an ACTIVE session).
			protect := func(policy types.ProtectionPolicy) {
				t.Helper()
				if _, err := w.gl.UpdateGameSession(ctx, &gamelift.UpdateGameSessionInput{GameSessionId: gs.GameSession.GameSessionId,
					ProtectionPolicy: policy}); err != nil {
					t.Fatal(err)
				}
			}
			protect(types.ProtectionPolicyFullProtection)
			w.capacity(fleet, 0, 3)
			w.groups(fleet, 1, 0)
			busy := w.pods(fleet)[0].Name
			protect(types.ProtectionPolicyNoProtection)
			w.groups(fleet, 0, 0)
			exectest.Eventually(t, "no pods left after the unprotected busy one went", 30*time.Second, func() (bool, string) {
				left := w.pods(fleet)
				return len(left) == 0, fmt.Sprintf("%d pods", len(left))
			})
			if _, err := w.gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String(busy)}); err == nil {
				t.Errorf("the removed group %s is still a compute", busy)
			}
			d, err := w.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
			if err != nil {
				t.Fatal(err)
			}
			if s := d.GameSessions[0]; s.Status != types.GameSessionStatusTerminated || s.StatusReason != types.GameSessionStatusReasonInterrupted {
				t.Errorf("the session of the group scaled down is %s (%s), want TERMINATED (INTERRUPTED)", s.Status, s.StatusReason)
			}

			// A pod deleted from outside, and one that fails, are replaced.
			w.capacity(fleet, 2, 3)
			w.groups(fleet, 0, 2)
			pods = w.pods(fleet)
			if err := cluster.Client.CoreV1().Pods(w.ns).Delete(ctx, pods[0].Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			failed := pods[1]
			// A reason no part of the cluster gives when it takes a pod
			// away: the group crashed.
			failed.Status.Phase, failed.Status.Reason = corev1.PodFailed, "UnexpectedAdmissionError"
			if _, err := cluster.Client.CoreV1().Pods(w.ns).UpdateStatus(ctx, &failed, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			exectest.Eventually(t, "two new pods", 60*time.Second, func() (bool, string) {
				var names []string
				for _, p := range w.pods(fleet) {
					if p.Name == pods[0].Name || p.Name == pods[1].Name {
						return false, "an old pod is left: " + p.Name
					}
					names = append(names, p.Name)
				}
				return len(names) == 2, strings.Join(names, " ")
			})
			w.groups(fleet, 0, 2)
			events, err := w.gl.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
			if err != nil {
				t.Fatal(err)
			}
			crashed := 0
			for _, e := range events.Events {
				if e.EventCode == types.EventCodeGameServerContainerGroupCrashed && aws.ToString(e.ResourceId) == failed.Name {
					crashed++
				}
			}
			if crashed != 1 {
				t.Errorf("%d GAME_SERVER_CONTAINER_GROUP_CRASHED events for %s, want 1", crashed, failed.Name)
			}

			// The fleet goes: so do its pods, their Secrets and its ConfigMap.
			if _, err := w.gl.DeleteContainerFleet(ctx, &gamelift.DeleteContainerFleetInput{FleetId: aws.String(fleet)}); err != nil {
				t.Fatal(err)
			}
			exectest.Eventually(t, "the fleet's objects to go", 60*time.Second, func() (bool, string) {
				secrets, err := cluster.Client.CoreV1().Secrets(w.ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelFleet + "=" + fleet})
				if err != nil {
					return false, err.Error()
				}
				_, cmErr := cluster.Client.CoreV1().ConfigMaps(w.ns).Get(ctx, fleet, metav1.GetOptions{})
				return len(w.pods(fleet)) == 0 && len(secrets.Items) == 0 && cmErr != nil && w.kubelet.running() == 0,
					fmt.Sprintf("%d pods, %d secrets, config map: %v, %d programs", len(w.pods(fleet)), len(secrets.Items), cmErr, w.kubelet.running())
			})
		})
	}
}

// TestServerRunsController: "anylift serve --kubeconfig" runs the
// controller, elected through a Lease among the nodes given the cluster;
// of two controllers on one namespace only the elected one acts.
func TestServerRunsController(t *testing.T) {
	cluster := kubetest.Start(t)
	ctx := context.Background()
	t.Run("server", func(t *testing.T) {
		ns := cluster.Namespace(t)
		env := apitest.Start(t, func(c *server.Config) {
			c.Kube = &server.KubeConfig{Kubeconfig: cluster.Kubeconfig, Namespace: ns, SDKEndpoint: "ws://anylift.example:9870"}
		})
		w := &world{t: t, cluster: cluster, ns: ns, api: env, gl: env.Client()}
		fleet := w.chatFleet(freePort(t))
		exectest.Eventually(t, "a pod", 30*time.Second, func() (bool, string) {
			pods := w.pods(fleet)
			return len(pods) == 1, fmt.Sprintf("%d pods", len(pods))
		})
		for _, e := range w.pods(fleet)[0].Spec.Containers[0].Env {
			if e.Name == sdk.EnvWebSocketURL && e.Value != "ws://anylift.example:9870" {
				t.Errorf("%s=%s, want the --kube-sdk-endpoint", e.Name, e.Value)
			}
		}
		lease, err := cluster.Client.CoordinationV1().Leases(ns).Get(ctx, kube.LeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			t.Errorf("lease %+v %v", lease, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(bad, []byte("not: [a kubeconfig"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Credentials: map[string]string{"a": "b"},
			Kube: &server.KubeConfig{Kubeconfig: bad}})
		if err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
			t.Errorf("a broken kubeconfig: %v, want an error naming --kubeconfig", err)
		}
	})
	t.Run("elected", func(t *testing.T) {
		ns := cluster.Namespace(t)
		env := apitest.Start(t)
		w := &world{t: t, cluster: cluster, ns: ns, api: env, gl: env.Client()}
		runCtx, cancel := context.WithCancel(ctx)
		var done []chan error
		for _, id := range []string{"node-a", "node-b"} {
			ctl := kube.New(kube.Config{Client: cluster.Client, Namespace: ns, Service: env.Server.Containers(),
				SDKEndpoint: env.Server.SDKEndpoint(), Interval: 50 * time.Millisecond})
			ch := make(chan error, 1)
			done = append(done, ch)
			go func() { ch <- ctl.RunElected(runCtx, id) }()
		}
		t.Cleanup(func() {
			cancel()
			for _, ch := range done {
				if err := <-ch; err != nil {
					t.Errorf("controller: %v", err)
				}
			}
		})
		fleet := w.chatFleet(freePort(t))
		w.capacity(fleet, 3, 3)
		// No kubelet: the pods stay Pending, and count as the groups
		// wanted; a second controller would add its own.
		exectest.Eventually(t, "three pending groups", 30*time.Second, func() (bool, string) {
			c, err := w.gl.DescribeFleetCapacity(ctx, &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
			if err != nil {
				return false, err.Error()
			}
			pending := aws.ToInt32(c.FleetCapacity[0].GameServerContainerGroupCounts.PENDING)
			return pending == 3 && len(w.pods(fleet)) == 3, fmt.Sprintf("%d pending, %d pods", pending, len(w.pods(fleet)))
		})
		lease, err := cluster.Client.CoordinationV1().Leases(ns).Get(ctx, kube.LeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil || (*lease.Spec.HolderIdentity != "node-a" && *lease.Spec.HolderIdentity != "node-b") {
			t.Fatalf("lease %+v %v", lease, err)
		}
		// One more: exactly one more pod and compute.
		w.capacity(fleet, 4, 4)
		exectest.Eventually(t, "four pending groups", 30*time.Second, func() (bool, string) {
			computes, err := w.gl.ListCompute(ctx, &gamelift.ListComputeInput{FleetId: aws.String(fleet)})
			if err != nil {
				return false, err.Error()
			}
			return len(w.pods(fleet)) == 4 && len(computes.ComputeList) == 4, fmt.Sprintf("%d pods, %d computes", len(w.pods(fleet)), len(computes.ComputeList))
		})
	})
}
