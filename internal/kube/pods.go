package kube

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/anylift/anylift/internal/containers"
	"github.com/anylift/anylift/internal/game"
	sdk "github.com/anylift/anylift/sdk/server"
)

// podName names a new group's pod (and compute, and Secret): the fleet
// id, instance and slot, and a random suffix, since a group replaced
// keeps its place but is a new compute.
func podName(fleetID string, instance, slot int) string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return fmt.Sprintf("%s-%d-%d-%s", fleetID, instance, slot, b[:])
}

// placeOf returns the instance and slot a group's name (podName) says.
func placeOf(fleetID, name string) (instance, slot int, ok bool) {
	rest, found := strings.CutPrefix(name, fleetID+"-")
	if !found {
		return 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(parts[0])
	s, err2 := strconv.Atoi(parts[1])
	return i, s, err1 == nil && err2 == nil && i >= 0 && s >= 0
}

// createGroup starts game server container group slot of instance: the
// compute registered (its token), the Secret, the pod.
func (c *Controller) createGroup(ctx context.Context, r *containers.ContainerFleetRun, owner *corev1.ConfigMap, instance, slot int) error {
	f := r.Fleet
	name := podName(f.ID, instance, slot)
	ports := game.SlotPorts(r.GameServer, f.Container, slot)
	token, err := c.cfg.Service.RegisterContainerCompute(ctx, containers.ContainerCompute{
		FleetID: f.ID, Name: name, InstanceID: fmt.Sprintf("%s-%d", f.ID, instance), Ports: ports})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.expected[name] = expectation{created: true, fleet: f.ID, instance: instance, slot: slot}
	c.mu.Unlock()
	fail := func(err error) error {
		c.mu.Lock()
		delete(c.expected, name)
		c.mu.Unlock()
		return errors.Join(err, c.cfg.Service.RemoveContainerCompute(ctx, f.ID, name))
	}
	// No BlockOwnerDeletion: the controller removes the ConfigMap last
	// itself, and a cluster that enforces owner reference permissions
	// would want a right on the ConfigMap's finalizers for it.
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}
	labels := map[string]string{
		LabelFleet: f.ID, LabelGroup: r.GameServer.Name, LabelGroupVersion: strconv.Itoa(r.GameServer.Version),
		LabelInstance: strconv.Itoa(instance), LabelSlot: strconv.Itoa(slot),
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{ref}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{tokenKey: []byte(token)},
	}
	cctx, cancel := c.call(ctx)
	_, err = c.cfg.Client.CoreV1().Secrets(c.cfg.Namespace).Create(cctx, secret, metav1.CreateOptions{})
	cancel()
	if err != nil {
		return fail(err)
	}
	pod := c.podFor(r, name, labels, ref, ports)
	cctx, cancel = c.call(ctx)
	_, err = c.cfg.Client.CoreV1().Pods(c.cfg.Namespace).Create(cctx, pod, metav1.CreateOptions{})
	cancel()
	if err != nil {
		// A pod made although its call failed (a timeout after the
		// server wrote it) is one Anylift does not know: the next
		// reconciliation removes it.
		return fail(errors.Join(err, c.deleteSecret(ctx, name)))
	}
	return nil
}

// podFor is the pod of a game server container group: its containers as
// the definition says, container ports published on their connection
// ports, the game server given what its server SDK needs.
func (c *Controller) podFor(r *containers.ContainerFleetRun, name string, labels map[string]string, owner metav1.OwnerReference,
	ports []game.PortMapping) *corev1.Pod {
	d := r.GameServer
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyAlways,
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
		},
	}
	// The game server container has what the support containers do not
	// reserve of the group's limits.
	memory, vcpu := d.TotalMemoryMiB, d.TotalVcpu
	for _, sc := range d.Support {
		memory -= sc.MemoryMiB
		vcpu -= sc.Vcpu
	}
	volumes := map[string]string{}
	for _, cd := range d.Containers() {
		ct := corev1.Container{Name: cd.Name, Image: cd.ImageURI}
		for _, e := range cd.Environment {
			ct.Env = append(ct.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
		}
		for _, m := range ports {
			if m.Container == cd.Name {
				ct.Ports = append(ct.Ports, corev1.ContainerPort{ContainerPort: int32(m.ContainerPort), HostPort: int32(m.ConnectionPort),
					Protocol: corev1.Protocol(m.Protocol)})
			}
		}
		for _, mp := range cd.MountPoints {
			vol, ok := volumes[mp.InstancePath]
			if !ok {
				vol = fmt.Sprintf("mount-%d", len(volumes))
				volumes[mp.InstancePath] = vol
				pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: vol,
					VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: mp.InstancePath}}})
			}
			path := mp.ContainerPath
			if path == "" {
				path = mp.InstancePath
			}
			ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: path, ReadOnly: mp.AccessLevel == "READ_ONLY"})
		}
		mem, cpu := cd.MemoryMiB, cd.Vcpu
		if cd == d.GameServer {
			mem, cpu = memory, vcpu
			ct.Env = append(ct.Env, c.sdkEnv(r.Fleet.ID, name)...)
		}
		ct.Resources = limits(mem, cpu)
		if h := cd.HealthCheck; h != nil {
			ct.LivenessProbe = probe(h)
		}
		pod.Spec.Containers = append(pod.Spec.Containers, ct)
	}
	return pod
}

// sdkEnv is what the server SDKs read in InitSDK() without arguments: the
// process endpoint, the fleet, the compute (the pod), a fresh process id
// each time the container starts, and the auth token from the group's
// Secret.
func (c *Controller) sdkEnv(fleetID, name string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: sdk.EnvWebSocketURL, Value: c.cfg.SDKEndpoint},
		{Name: sdk.EnvFleetID, Value: fleetID},
		{Name: sdk.EnvHostID, Value: name},
		{Name: sdk.EnvProcessID, Value: sdk.ManagedResource},
		{Name: sdk.EnvAuthToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: tokenKey}}},
	}
}

// limits are a container's memory (MiB) and vCPU as requests and limits;
// none when zero.
func limits(memoryMiB int, vcpu float64) corev1.ResourceRequirements {
	rl := corev1.ResourceList{}
	if memoryMiB > 0 {
		rl[corev1.ResourceMemory] = *resource.NewQuantity(int64(memoryMiB)<<20, resource.BinarySI)
	}
	if vcpu > 0 {
		rl[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(vcpu*1000), resource.DecimalSI)
	}
	if len(rl) == 0 {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// probe turns a support container's health check (Docker's form: "CMD",
// args… or "CMD-SHELL", a command line) into a liveness probe.
func probe(h *game.ContainerHealthCheck) *corev1.Probe {
	cmd := h.Command
	switch {
	case len(cmd) > 0 && cmd[0] == "CMD":
		cmd = cmd[1:]
	case len(cmd) > 1 && cmd[0] == "CMD-SHELL":
		cmd = []string{"/bin/sh", "-c", strings.Join(cmd[1:], " ")}
	}
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}}
	if h.Interval > 0 {
		p.PeriodSeconds = int32(h.Interval)
	}
	if h.Timeout > 0 {
		p.TimeoutSeconds = int32(h.Timeout)
	}
	if h.Retries > 0 {
		p.FailureThreshold = int32(h.Retries)
	}
	if h.StartPeriod > 0 {
		p.InitialDelaySeconds = int32(h.StartPeriod)
	}
	return p
}
