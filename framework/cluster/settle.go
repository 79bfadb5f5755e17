package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/volperm/volperm/framework/nodecontrol"
)

// What node control reads of the kubelet to wait, after a restart, until its pods and mounted
// volumes are back (nodecontrol settle): its /pods and its volume manager's gauges.

// kubeletNow reads the kubelet's state; nil when it cannot be read (settle then waits its
// longest).
func (t *Target) kubeletNow(ctx context.Context) *nodecontrol.KubeletState {
	mounted := t.mountedVolumes(ctx)
	if mounted == nil {
		return nil
	}
	pods, declared := t.kubeletPods(ctx)
	if pods == nil {
		return nil
	}
	return &nodecontrol.KubeletState{Pods: pods, Mounted: mounted, Declared: declared}
}

// kubeletPods is the UIDs of the pods the kubelet knows (its /pods: the pod manager's), the
// ones being deleted left out (they need not come back), and their volumes per plugin
// (declaredVolumes); nil when it cannot be read.
func (t *Target) kubeletPods(ctx context.Context) (map[string]bool, map[string]int) {
	raw, err := t.getOnce(ctx, "/api/v1/nodes/"+t.node+"/proxy/pods")
	if err != nil {
		return nil, nil
	}
	var list corev1.PodList
	if err := json.Unmarshal(raw, &list); err != nil {
		t.logf("kubelet pods of %s: %v", t.node, err)
		return nil, nil
	}
	uids := map[string]bool{}
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			uids[string(p.UID)] = true
			live = append(live, p)
		}
	}
	return uids, declaredVolumes(live)
}

// pluginNames are the kubelet's names of the in-tree volume plugins of the volume types the
// harness's pods use (v1.37 pkg/volume: emptydir emptyDirPluginName, hostpath
// hostPathPluginName, secret secretPluginName, configmap configMapPluginName, downwardapi
// downwardAPIPluginName, projected projectedPluginName), as volume_manager_total_volumes names
// them.
var pluginNames = []struct {
	name string
	is   func(corev1.VolumeSource) bool
}{
	{"kubernetes.io/empty-dir", func(v corev1.VolumeSource) bool { return v.EmptyDir != nil }},
	{"kubernetes.io/host-path", func(v corev1.VolumeSource) bool { return v.HostPath != nil }},
	{"kubernetes.io/secret", func(v corev1.VolumeSource) bool { return v.Secret != nil }},
	{"kubernetes.io/configmap", func(v corev1.VolumeSource) bool { return v.ConfigMap != nil }},
	{"kubernetes.io/downward-api", func(v corev1.VolumeSource) bool { return v.DownwardAPI != nil }},
	{"kubernetes.io/projected", func(v corev1.VolumeSource) bool { return v.Projected != nil }},
}

// declaredVolumes counts the volumes of pods per plugin, for every plugin of pluginNames (0
// included); the volumes of other plugins (flexVolume drivers, image volumes, CSI) are not
// counted, and their plugins are left out.
func declaredVolumes(pods []corev1.Pod) map[string]int {
	out := map[string]int{}
	for _, pn := range pluginNames {
		out[pn.name] = 0
	}
	for _, p := range pods {
		for _, v := range p.Spec.Volumes {
			for _, pn := range pluginNames {
				if pn.is(v.VolumeSource) {
					out[pn.name]++
				}
			}
		}
	}
	return out
}

// mountedVolumes is the kubelet's count of mounted volumes per plugin; nil when it cannot be
// read.
func (t *Target) mountedVolumes(ctx context.Context) map[string]int {
	raw, err := t.getOnce(ctx, "/api/v1/nodes/"+t.node+"/proxy/metrics")
	if err != nil {
		return nil
	}
	counts, err := parseMountedVolumes(raw)
	if err != nil {
		t.logf("kubelet metrics of %s: %v", t.node, err)
		return nil
	}
	return counts
}

// parseMountedVolumes reads the volume_manager_total_volumes gauges of state
// actual_state_of_world from a kubelet's /metrics answer (pkg/kubelet/volumemanager/metrics
// getVolumeCount: GetMountedVolumes, the uncertain ones left out).
func parseMountedVolumes(raw []byte) (map[string]int, error) {
	counts := map[string]int{}
	err := gauges(raw, "volume_manager_total_volumes", func(line string, val float64) {
		if label(line, "state") == "actual_state_of_world" {
			counts[label(line, "plugin_name")] += int(val)
		}
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}
