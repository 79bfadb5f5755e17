package cluster

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// A pod with hostUsers: false sees its volumes through idmapped mounts: its probe container
// observes the owners as the pod sees them. What lands on disk is read from a second pod of
// the batch on the same node, in the node's user namespace, that mounts the kubelet's pods
// directory (and HostRoot, for hostPath volumes) and snapshots each volume of the probe pod
// where the kubelet set it up. Where the two differ (an owner outside the pod's range: 65534
// in the pod) the Observation has the disk's owner and the pod's as PodUID/PodGID
// (docs/observation.md "Two views"), as framework/lifecycle podOwners gives it on the other
// targets.

// KubeletPods is the kubelet's pods directory on a node: the default --root-dir
// (/var/lib/kubelet) + "pods" (v1.37 pkg/kubelet/kubelet_getters.go getPodsDir).
const KubeletPods = "/var/lib/kubelet/pods"

// defaultHandlerUserNamespaces says whether node n's default runtime handler ("") runs pods in
// user namespaces (v1.37 Node.status.runtimeHandlers, from the CRI's RuntimeHandlerFeatures).
func defaultHandlerUserNamespaces(n *corev1.Node) bool {
	for _, h := range n.Status.RuntimeHandlers {
		if h.Name == "" && h.Features != nil && h.Features.UserNamespaces != nil {
			return *h.Features.UserNamespaces
		}
	}
	return false
}

// defaultHandlerRecursiveReadOnly says whether node n's default runtime handler makes
// recursive read-only mounts (status.runtimeHandlers[""].features.recursiveReadOnlyMounts).
func defaultHandlerRecursiveReadOnly(n *corev1.Node) bool {
	for _, h := range n.Status.RuntimeHandlers {
		if h.Name == "" && h.Features != nil && h.Features.RecursiveReadOnlyMounts != nil {
			return *h.Features.RecursiveReadOnlyMounts
		}
	}
	return false
}

// createDiskPod makes the batch's disk-view pod (prefix-disk in ns) when a pod of pods runs in a
// user namespace, and records it for diskView.
func (t *Target) createDiskPod(ctx context.Context, ns, prefix string, pods []*probePod) error {
	need := false
	for _, p := range pods {
		need = need || p.userNamespace || p.mayRefuse
	}
	if !need {
		return nil
	}
	pod := t.probePodSpec(prefix+"-disk", ns, nil)
	// HostToContainer: the kubelet mounts the probe pods' volumes after this pod started.
	toContainer := corev1.MountPropagationHostToContainer
	dir, dirOrCreate := corev1.HostPathDirectory, corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "pods", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: KubeletPods, Type: &dir}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: HostRoot, Type: &dirOrCreate}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "pods", MountPath: KubeletPods, ReadOnly: true, MountPropagation: &toContainer},
		{Name: "host", MountPath: HostRoot, ReadOnly: true, MountPropagation: &toContainer},
	}
	if err := t.startHelper(ctx, pod, "disk-view pod"); err != nil {
		return err
	}
	t.mu.Lock()
	if t.diskPods == nil {
		t.diskPods = map[string]string{}
	}
	t.diskPods[ns] = pod.Name
	t.mu.Unlock()
	return nil
}

// diskView snapshots p's volumes as they are on the node and makes them answer's paths, with
// the owners the pod sees (answer's, so far) as PodUID/PodGID where they differ.
func (t *Target) diskView(ctx context.Context, p *probePod, answer *framework.Observation) error {
	where, err := t.onDisk(ctx, p)
	if err != nil {
		return err
	}
	var req incontainer.Request
	for _, v := range p.pod.Spec.Volumes {
		if w := where[v.Name]; w != "" {
			req.Volumes = append(req.Volumes, incontainer.Volume{Name: v.Name, Path: w, Root: v.HostPath != nil})
		}
	}
	onDisk, err := t.diskRequest(ctx, p, req)
	if err != nil {
		return err
	}
	byVolume := map[string][]framework.PathObservation{}
	for _, v := range onDisk.Volumes {
		byVolume[v.Name] = v.Paths
	}
	for i := range answer.Volumes {
		v := &answer.Volumes[i]
		disk := byVolume[v.Name]
		// An entry the pod sees that is not on disk: the two views were not of one volume.
		if missing := framework.PodOwners(disk, v.Paths); len(missing) > 0 {
			return fmt.Errorf("disk view of %s, volume %s: %q seen in the pod, not on the node", p.name, v.Name, missing)
		}
		v.Paths = disk
	}
	return nil
}

// onDisk is where each volume of p is on its node, as the disk-view pod mounts it.
func (t *Target) onDisk(ctx context.Context, p *probePod) (map[string]string, error) {
	live, err := t.getPod(ctx, p.pod.Namespace, p.name)
	if err != nil {
		return nil, err
	}
	where := map[string]string{}
	for _, v := range p.pod.Spec.Volumes {
		if v.HostPath != nil {
			where[v.Name] = v.HostPath.Path
		} else if d := kubelet.PluginDir(v); d != "" {
			where[v.Name] = path.Join(KubeletPods, string(live.UID), "volumes", d, v.Name)
		}
	}
	return where, nil
}

// diskRequest runs req in the batch's disk-view pod (the node's user namespace).
func (t *Target) diskRequest(ctx context.Context, p *probePod, req incontainer.Request) (*framework.Observation, error) {
	ns := p.pod.Namespace
	t.mu.Lock()
	disk := t.diskPods[ns]
	t.mu.Unlock()
	if disk == "" {
		return nil, fmt.Errorf("probe pod %s runs in a user namespace and the batch has no disk-view pod", p.name)
	}
	view := lifecycle.ExecInside("the disk view of "+p.name, func(ctx context.Context, req []byte) ([]byte, error) {
		out, err := t.exec(ctx, ns, disk, []string{ProbeCommand, "-request", "-"}, req)
		if err != nil {
			return nil, fmt.Errorf("disk view of %s: %w", p.name, err)
		}
		return out, nil
	})
	return view.Request(ctx, req)
}

// made gives each allowed probe of steps that made or changed an entry what is at its path now
// (framework.ProbeResult.Made): stat through the disk-view pod and in the probe container (the
// pod's view), all probes done. A path a later probe removed has nothing.
func (t *Target) made(ctx context.Context, p *probePod, steps []probe.Step, results []framework.ProbeResult) error {
	where, err := t.onDisk(ctx, p)
	if err != nil {
		return err
	}
	var inPod, onDisk incontainer.Request
	var idx []int
	for i, s := range steps {
		if !results[i].Allowed || !framework.MakesEntry(s.Probe.Op) || where[s.Probe.Volume] == "" {
			continue
		}
		name := fmt.Sprintf("made-%d", i)
		inPod.Volumes = append(inPod.Volumes, incontainer.Volume{Name: name, Path: path.Join(s.Root, s.Probe.Path), Root: true})
		onDisk.Volumes = append(onDisk.Volumes, incontainer.Volume{Name: name, Path: path.Join(where[s.Probe.Volume], s.Probe.Path), Root: true})
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return nil
	}
	pod, err := t.request(ctx, p, inPod)
	if err != nil {
		return err
	}
	disk, err := t.diskRequest(ctx, p, onDisk)
	if err != nil {
		return err
	}
	for j, i := range idx {
		d := disk.Volumes[j].Paths
		if len(d) == 0 || d[0].Type == snapshot.Absent {
			continue
		}
		framework.PodOwners(d, pod.Volumes[j].Paths)
		e := d[0]
		e.Path = steps[i].Probe.Path
		results[i].Made = &e
	}
	return nil
}

// liveRanges are the host ids of the user-namespaced probe pods running on a target's node, by
// namespace/name, from the time their range is read until their deletion is asked: two of them
// sharing a host id is the kubelet giving two running pods one range (docs/spec.md
// [userns.range]: disjoint; v1.37 userns_manager.go allocates from a bitmap of free slots).
type liveRanges struct {
	mu   sync.Mutex
	pods map[string]framework.IDMap
}

// add records pod's range and returns a running pod that has host ids of it ("" for none), and
// how many others run.
func (l *liveRanges) add(pod string, m framework.IDMap) (shared string, others int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pods == nil {
		l.pods = map[string]framework.IDMap{}
	}
	for other, o := range l.pods {
		if other != pod && uint64(m.HostID) < uint64(o.HostID)+uint64(o.Length) && uint64(o.HostID) < uint64(m.HostID)+uint64(m.Length) {
			shared = other
		}
	}
	others = len(l.pods)
	l.pods[pod] = m
	return shared, others
}

// remove forgets pod (namespace/name), or every pod of a namespace given as "namespace/".
func (l *liveRanges) remove(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.pods {
		if k == key || strings.HasSuffix(key, "/") && strings.HasPrefix(k, key) {
			delete(l.pods, k)
		}
	}
}

// checkRange records the range the probe pod p reports (u) among the running ones and names in
// u another running pod that shares host ids with it.
func (t *Target) checkRange(p *probePod, u *framework.UserNamespace) {
	if u == nil || u.IDs == 0 {
		return
	}
	key := p.pod.Namespace + "/" + p.name
	shared, others := t.ranges.add(key, framework.IDMap{HostID: u.HostID, Length: u.IDs})
	t.logf("user namespace of %s: host ids %d..%d, %d other user-namespaced probe pods running%s", key, u.HostID, u.HostID+u.IDs-1, others, setIf(shared != "", ", sharing ids with "+shared))
	u.SharedWith = shared
}

func setIf(b bool, s string) string {
	if b {
		return s
	}
	return ""
}
