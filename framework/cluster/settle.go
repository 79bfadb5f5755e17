package cluster

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// After a kubelet restart the volume manager reconstructs the running pods' volumes as
// uncertain and its reconciler mounts them again (SetUp again: fsGroup ownership re-applied,
// an AtomicWriter payload written again). The kubelet's volume_manager_total_volumes gauges
// (pkg/kubelet/volumemanager/metrics getVolumeCount) count, per volume plugin, the volumes
// mounted (state actual_state_of_world: GetMountedVolumes, the uncertain ones left out) and the
// desired ones. settle waits until each plugin has at least as many mounted volumes as it had
// before the restart: every volume mounted then is mounted again.

// mountedVolumes is the kubelet's count of mounted volumes per plugin; nil when it cannot be
// read (settle then waits kubeletSettle).
func (t *Target) mountedVolumes(ctx context.Context) map[string]int {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	raw, err := t.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + t.node + "/proxy/metrics").DoRaw(ctx)
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
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "volume_manager_total_volumes{") || !strings.Contains(line, `state="actual_state_of_world"`) {
			continue
		}
		_, rest, _ := strings.Cut(line, `plugin_name="`)
		plugin, _, _ := strings.Cut(rest, `"`)
		fields := strings.Fields(line)
		val, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		counts[plugin] += int(val)
	}
	return counts, sc.Err()
}

// remounting names the plugins with fewer mounted volumes in now than in before ("" when none).
func remounting(before, now map[string]int) string {
	var short []string
	for plugin, n := range before {
		if now[plugin] < n {
			short = append(short, fmt.Sprintf("%s %d of %d", plugin, now[plugin], n))
		}
	}
	sort.Strings(short)
	return strings.Join(short, ", ")
}

// settle waits, after a kubelet restart, until every volume mounted before it (before) is
// mounted again, kubeletSettle at most; with before unknown, kubeletSettle.
func (t *Target) settle(ctx context.Context, before map[string]int) error {
	deadline := time.Now().Add(kubeletSettle)
	short := "the count before the restart was not read"
	for before != nil {
		now := t.mountedVolumes(ctx)
		if now != nil {
			if short = remounting(before, now); short == "" {
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
	t.logf("kubelet of %s: volumes not all mounted again after %s (%s)", t.node, kubeletSettle, short)
	return nil
}
