package nodecontrol

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/volperm/volperm/framework"
)

// Cluster is what a Driver reads of the cluster whose node it changes, and tells it, through
// the cluster's API (framework/cluster is one; tests fake it). Each read is one attempt: a
// component being restarted does not answer, and the Driver tries again.
type Cluster interface {
	// KubeletGates reads the gates the node's kubelet reports (its /metrics).
	KubeletGates(ctx context.Context) (map[string]bool, error)
	// APIServerGates reads the gates the apiserver at endpoint reports ("" = the kubeconfig's).
	APIServerGates(ctx context.Context, endpoint string) (map[string]bool, error)
	// APIServerReady says whether the apiserver at endpoint is ready (its /readyz).
	APIServerReady(ctx context.Context, endpoint string) bool
	// KubeletState reads the kubelet's pods and mounted volumes; nil when it cannot.
	KubeletState(ctx context.Context) *KubeletState
	// UseEndpoint sends the cluster's requests to the apiserver at endpoint from now on.
	UseEndpoint(endpoint string)
}

// KubeletState is what settle compares across a kubelet restart: the kubelet's pods (their
// UIDs, the ones being deleted left out), its mounted volumes per plugin, and the volumes per
// plugin its pods declare (Declared: every plugin the reader can name, 0 included; a plugin
// it cannot name is left out).
type KubeletState struct {
	Pods     map[string]bool
	Mounted  map[string]int
	Declared map[string]int
}

// Waits bound a Driver's waits (zero: DefaultWaits).
type Waits struct {
	// Kubelet is the longest a restarted or swapped kubelet takes to report its gates.
	Kubelet time.Duration
	// APIServer is the longest an apiserver of other gates takes to report them and be ready.
	APIServer time.Duration
	// Settle is the longest the volume manager takes to set the running pods' volumes up again
	// after a kubelet restart (v1.37 reconstruction marks them uncertain; the reconciler mounts
	// them again within a sync period): usually about a second; a pod that went away meanwhile
	// never comes back.
	Settle time.Duration
	// Poll is the pause between two reads.
	Poll time.Duration
}

// DefaultWaits are the waits on a kind node.
var DefaultWaits = Waits{Kubelet: 90 * time.Second, APIServer: 3 * time.Minute, Settle: 5 * time.Second, Poll: 500 * time.Millisecond}

// Driver executes Actions on a node through its Control, reads the cluster to wait for each
// (Cluster), and keeps the node's State up to date.
type Driver struct {
	ctl     Control
	cluster Cluster
	node    string
	now     *State
	waits   Waits
	logf    func(string, ...any)
}

// NewDriver drives node (its name, for messages) of cluster through ctl; now is what runs on
// it, which the Driver updates as its actions take effect (the caller reads it).
func NewDriver(ctl Control, cluster Cluster, node string, now *State, waits Waits, logf func(string, ...any)) *Driver {
	if waits == (Waits{}) {
		waits = DefaultWaits
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Driver{ctl: ctl, cluster: cluster, node: node, now: now, waits: waits, logf: logf}
}

// Releases are the kubelet releases the node can be given besides its own (KubeletReleaser),
// and whether it can be given any.
func (d *Driver) Releases() ([]string, bool) {
	kr, ok := d.ctl.(KubeletReleaser)
	if !ok {
		return nil, false
	}
	return kr.KubeletReleases(), true
}

// Do executes actions in order; the first that fails ends it.
func (d *Driver) Do(ctx context.Context, actions ...Action) error {
	for _, a := range actions {
		if err := d.do(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func (d *Driver) do(ctx context.Context, a Action) error {
	start := time.Now()
	switch a.Kind {
	case UseAPIServer:
		ep, err := d.APIServerOf(ctx, a.Gates)
		if err != nil {
			return err // the apiserver of the gates in force still serves
		}
		d.cluster.UseEndpoint(ep)
		d.now.Gates.APIServer = maps.Clone(a.Gates)
		where := "the kubeconfig's apiserver"
		if ep != "" {
			where = "the apiserver at " + ep
		}
		d.logf("%s serves %s, in %s", where, CellKey(framework.Gates{APIServer: a.Gates}), since(start))
		return nil
	case WriteKubeletGates:
		return d.ctl.SetKubeletGates(ctx, a.Gates)
	case RestartKubelet:
		before := d.before(ctx, a.Settle)
		if err := d.ctl.RestartKubelet(ctx); err != nil {
			return err
		}
		if _, err := d.kubeletReports(ctx, "kubelet of "+d.node+" back", a.Gates); err != nil {
			return err
		}
		d.now.Gates.Kubelet = maps.Clone(a.Gates)
		if a.Settle {
			d.settle(ctx, before)
		}
		d.logf("kubelet restarted with %s in %s", CellKey(framework.Gates{Kubelet: a.Gates}), since(start))
		return ctx.Err()
	case SwapKubelet:
		kr, ok := d.ctl.(KubeletReleaser)
		if !ok {
			return fmt.Errorf("node %s: this target cannot replace the kubelet", d.node)
		}
		before := d.before(ctx, a.Settle)
		if err := kr.SetKubeletRelease(ctx, a.Release, a.Gates); err != nil {
			return err
		}
		got, err := d.kubeletReports(ctx, "kubelet "+a.Release+" of "+d.node+" back", a.Gates)
		if err != nil {
			return err
		}
		d.now.Gates.Kubelet, d.now.Release = got, a.Release
		if a.Settle {
			d.settle(ctx, before)
		}
		d.logf("kubelet of node %s replaced by %s with %s in %s", d.node, a.Release, CellKey(framework.Gates{Kubelet: a.Gates}), since(start))
		return ctx.Err()
	}
	return fmt.Errorf("node control: no such action: %v", a)
}

// APIServerOf is the endpoint of an apiserver of the cluster that serves gates (full maps,
// Full): the node control gives one (Control.SetAPIServerGates), and it is waited for until it
// reports the gates and is ready. Nothing is put in force: the caller sends its requests there,
// or an UseAPIServer action does.
func (d *Driver) APIServerOf(ctx context.Context, gates map[string]bool) (string, error) {
	ep, err := d.ctl.SetAPIServerGates(ctx, gates)
	if err != nil {
		return "", err
	}
	err = d.waitFor(ctx, d.waits.APIServer, "apiserver with gates "+CellKey(framework.Gates{APIServer: gates}), func() bool {
		got, err := d.cluster.APIServerGates(ctx, ep)
		if err != nil || framework.GatesMismatch(framework.Gates{APIServer: gates}, framework.Gates{APIServer: got}) != "" {
			return false // starting, or not serving those gates yet
		}
		return d.cluster.APIServerReady(ctx, ep)
	})
	return ep, err
}

// kubeletReports waits until the kubelet reports want and returns what it reports.
func (d *Driver) kubeletReports(ctx context.Context, what string, want map[string]bool) (map[string]bool, error) {
	var got map[string]bool
	err := d.waitFor(ctx, d.waits.Kubelet, what, func() bool {
		var err error
		if got, err = d.cluster.KubeletGates(ctx); err != nil {
			return false // restarting
		}
		return framework.GatesMismatch(framework.Gates{Kubelet: want}, framework.Gates{Kubelet: got}) == ""
	})
	return got, err
}

// ErrNotWithin is a Driver's wait that timed out.
var ErrNotWithin = errors.New("not within")

// waitFor polls cond until it is true or timeout passes.
func (d *Driver) waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w %s", what, ErrNotWithin, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(d.waits.Poll):
		}
	}
	return nil
}

// before is the kubelet's state a restart must give back (nil: unknown, or nothing to settle).
func (d *Driver) before(ctx context.Context, settle bool) *KubeletState {
	if !settle {
		return nil
	}
	return d.cluster.KubeletState(ctx)
}

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

// settle waits, after a kubelet restart, until every pod and volume the kubelet had before it
// is back: the pods Waits.Kubelet at most (an exec into a pod the kubelet does not know yet is
// refused, so they are worth the wait), then the volumes Waits.Settle at most; with before
// unknown, Waits.Settle. It does not fail: what is not back by then is logged, and the pods'
// observations say the rest. The pods alone took longer than Waits.Settle in CI (44 of 44
// not known 5 s after one restart of the kind catalogue, in two runs; in one the probes' execs
// then failed "pod does not exist").
func (d *Driver) settle(ctx context.Context, before *KubeletState) {
	start := time.Now()
	deadline, podsBy := start.Add(d.waits.Settle), start.Add(d.waits.Kubelet)
	short := "the state before the restart was not read"
	for before != nil {
		if now := d.cluster.KubeletState(ctx); now != nil {
			if short = Missing(before, now); short == "" {
				return
			}
			if unknownPods(before, now) > 0 {
				// The volumes get Waits.Settle after the pods are back.
				if later := time.Now().Add(d.waits.Settle); later.After(deadline) {
					deadline = later
				}
				if deadline.After(podsBy) {
					deadline = podsBy
				}
			}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(settlePoll):
		}
	}
	if wait := time.Until(deadline); wait > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	d.logf("kubelet of %s: not all back after %s (%s)", d.node, since(start), short)
}

// unknownPods counts the pods of before that the kubelet does not know in now.
func unknownPods(before, now *KubeletState) int {
	n := 0
	for uid := range before.Pods {
		if !now.Pods[uid] {
			n++
		}
	}
	return n
}

// Missing says what of before is not back in now ("" when everything is): pods the kubelet does
// not know yet, plugins with fewer mounted volumes than before. Of a plugin whose volumes the
// pods declare, no more are awaited than its pods have: a pod being deleted before the restart
// is not among them, and its volumes, still mounted then, do not come back (seen on kind: 256
// emptyDirs of a pod of the last batch awaited for the whole settle).
func Missing(before, now *KubeletState) string {
	var short, plugins []string
	if n := unknownPods(before, now); n > 0 {
		short = append(short, fmt.Sprintf("%d of %d pods not known yet", n, len(before.Pods)))
	}
	for plugin, n := range before.Mounted {
		if d, named := before.Declared[plugin]; named && d < n {
			n = d
		}
		if now.Mounted[plugin] < n {
			plugins = append(plugins, fmt.Sprintf("%s %d of %d mounted", plugin, now.Mounted[plugin], n))
		}
	}
	sort.Strings(plugins)
	return strings.Join(append(short, plugins...), ", ")
}

// settlePoll is the pause between two reads of the kubelet's state while it settles.
const settlePoll = 200 * time.Millisecond

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
