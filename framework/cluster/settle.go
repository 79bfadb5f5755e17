package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/json"
)

// After a kubelet restart the kubelet learns its pods again from the apiserver (its pod
// manager: until then an exec into one of them is refused, "pod does not exist", v1.37
// pkg/kubelet/server getExec), and the volume manager reconstructs the running pods' volumes as
// uncertain and its reconciler mounts them again (SetUp again: fsGroup ownership re-applied, an
// AtomicWriter payload written again). settle waits for both: every pod the kubelet ran before
// the restart is in its /pods again, and each volume plugin has at least as many mounted volumes
// as before (the kubelet's volume_manager_total_volumes gauges, pkg/kubelet/volumemanager/metrics
// getVolumeCount: state actual_state_of_world counts GetMountedVolumes, the uncertain ones left
// out). The mounted counts alone were not enough: seen on kind, they were back while an exec
// into a pod of them was still refused.

// kubeletState is what settle compares: the kubelet's pods (by UID) and its mounted volumes per
// plugin.
type kubeletState struct {
	pods    map[string]bool
	mounted map[string]int
}

// kubeletNow reads the kubelet's state; nil when it cannot be read (settle then waits
// kubeletSettle).
func (t *Target) kubeletNow(ctx context.Context) *kubeletState {
	mounted := t.mountedVolumes(ctx)
	if mounted == nil {
		return nil
	}
	pods := t.kubeletPods(ctx)
	if pods == nil {
		return nil
	}
	return &kubeletState{pods: pods, mounted: mounted}
}

// kubeletPods is the UIDs of the pods the kubelet knows (its /pods: the pod manager's), the
// ones being deleted left out (they need not come back); nil when it cannot be read.
func (t *Target) kubeletPods(ctx context.Context) map[string]bool {
	raw, err := t.getOnce(ctx, "/api/v1/nodes/"+t.node+"/proxy/pods")
	if err != nil {
		return nil
	}
	var list corev1.PodList
	if err := json.Unmarshal(raw, &list); err != nil {
		t.logf("kubelet pods of %s: %v", t.node, err)
		return nil
	}
	uids := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			uids[string(p.UID)] = true
		}
	}
	return uids
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
// actual_state_of_world from a kubelet's /metrics answer.
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

// missing says what of before is not back in now ("" when everything is): pods the kubelet does
// not know yet, plugins with fewer mounted volumes.
func missing(before, now *kubeletState) string {
	var short, plugins []string
	n := 0
	for uid := range before.pods {
		if !now.pods[uid] {
			n++
		}
	}
	if n > 0 {
		short = append(short, fmt.Sprintf("%d of %d pods not known yet", n, len(before.pods)))
	}
	for plugin, n := range before.mounted {
		if now.mounted[plugin] < n {
			plugins = append(plugins, fmt.Sprintf("%s %d of %d mounted", plugin, now.mounted[plugin], n))
		}
	}
	sort.Strings(plugins)
	return strings.Join(append(short, plugins...), ", ")
}

// settle waits, after a kubelet restart, until every pod and volume the kubelet had before it
// (before) is back, kubeletSettle at most; with before unknown, kubeletSettle.
func (t *Target) settle(ctx context.Context, before *kubeletState) error {
	deadline := time.Now().Add(kubeletSettle)
	short := "the state before the restart was not read"
	for before != nil {
		if now := t.kubeletNow(ctx); now != nil {
			if short = missing(before, now); short == "" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if wait := time.Until(deadline); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	t.logf("kubelet of %s: not all back after %s (%s)", t.node, kubeletSettle, short)
	return nil
}
