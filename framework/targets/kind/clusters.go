package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindlog "sigs.k8s.io/kind/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/nodecontrol"
	"github.com/volperm/volperm/framework/owner"
)

// kindNetwork is the Docker network kind puts its nodes on.
const kindNetwork = "kind"

type liveCluster struct {
	name       string
	kubeconfig string
	target     *cluster.Target
	// steps is the cluster target of the cases with steps, on the worker they have to
	// themselves (Options.StepsNode; nil: they run on target's node, as every case).
	steps *cluster.Target
	// apiserverNode and kubeletNode are the node containers of the control plane and of the
	// node the probe pods run on (the same one without workers).
	apiserverNode, kubeletNode string
	// byRelease are the cluster targets pinned to the worker of each kubelet release
	// (Options.KubeletReleases); targets is every cluster target on the cluster.
	byRelease map[string]*cluster.Target
	targets   []*cluster.Target
	// ready is closed when the creation has ended, err its error: callers of cluster that
	// came while another created it (the cells of kind@matrix, prepared in parallel) wait.
	ready chan struct{}
	err   error
}

// created is the target's one cluster once its creation has succeeded, else nil.
func (t *Target) created() *liveCluster {
	t.mu.Lock()
	var lc *liveCluster
	for _, l := range t.live {
		lc = l
	}
	t.mu.Unlock()
	if lc == nil {
		return nil
	}
	select {
	case <-lc.ready:
		if lc.err == nil {
			return lc
		}
	default:
	}
	return nil
}

// one is the target's one live cluster (a zero one before it is created).
func (t *Target) one() liveCluster {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, lc := range t.live {
		return *lc
	}
	return liveCluster{}
}

// clusterName is the name of the cluster of config name: volperm-[TAG-]NAME.
func clusterName(tag, name string) string {
	if tag != "" {
		return "volperm-" + tag + "-" + name
	}
	return "volperm-" + name
}

// withWorkers adds n worker nodes to a kind config.
func withWorkers(raw []byte, n int) ([]byte, error) {
	if n == 0 {
		return raw, nil
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	nodes, _ := cfg["nodes"].([]any)
	for range n {
		nodes = append(nodes, map[string]any{"role": "worker"})
	}
	cfg["nodes"] = nodes
	return yaml.Marshal(cfg)
}

// shared is the target's one cluster, created from the config cases need most (startConfig) by
// the first caller; the others (the cells of kind@matrix, prepared at once) wait for it.
func (t *Target) shared(ctx context.Context, cases []*framework.Case) (*liveCluster, error) {
	t.startMu.Lock()
	defer t.startMu.Unlock()
	if t.created() == nil && t.opts.StepsNode && t.opts.Workers == 0 {
		t.splitSteps = splitSteps(cases)
	}
	return t.cluster(ctx, t.startConfig(cases))
}

// splitSteps says whether the cluster of cases gets a steps node (Options.StepsNode). Decided
// by the first batch (the whole run: framework.RunBatcher): a worker is worth its start only
// when cases without steps are there to run beside gate histories (timelines), which run one
// after another. Measured 2026-11-28: alone, the v1.37 catalogue (timelines 51 s, a step group
// 24 s) took 173 s with a steps node, 223 s without, its cluster made in 21.5 s instead of 10;
// in CI, the v1.36 selection (no history, one step group of 49 cases, 38 s) gained nothing on the
// worker and its cluster took 47.7 s to make instead of 10.3 beside the other lanes.
func splitSteps(cases []*framework.Case) bool {
	histories := slices.ContainsFunc(cases, nodecontrol.IsHistory)
	plain := slices.ContainsFunc(cases, func(c *framework.Case) bool { return !hasSteps(c) })
	return histories && plain
}

// hasSteps: c's case goes through steps after its pod is created (Options.StepsNode).
func hasSteps(c *framework.Case) bool { return len(c.After) > 0 }

// of is the cluster target c runs on: steps' for a case with steps when the cluster has a
// steps node, else target.
func (lc *liveCluster) of(c *framework.Case) *cluster.Target {
	if lc.steps != nil && hasSteps(c) {
		return lc.steps
	}
	return lc.target
}

// startConfig is the kind-config whose gates most cases need (the first config when none
// has): the cluster then starts in the biggest cell. Once created it serves every batch.
func (t *Target) startConfig(cases []*framework.Case) string {
	t.mu.Lock()
	for n := range t.live {
		t.mu.Unlock()
		return n
	}
	t.mu.Unlock()
	count := map[string]int{}
	best := t.configs[0].Name
	for _, c := range cases {
		if cfg, why := t.ConfigFor(c); why == "" {
			count[cfg.Name]++
			if count[cfg.Name] > count[best] {
				best = cfg.Name
			}
		}
	}
	return best
}

// cluster returns the live cluster of config name, creating it (once: a second caller waits
// for the first's creation and gets its result). The lock is not held while kind creates it, so
// that Close (an interrupted run) can delete it meanwhile.
func (t *Target) cluster(ctx context.Context, name string) (*liveCluster, error) {
	t.mu.Lock()
	if lc := t.live[name]; lc != nil {
		t.mu.Unlock()
		select {
		case <-lc.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if lc.err != nil {
			return nil, lc.err
		}
		return lc, nil
	}
	var cfg Config
	for _, c := range t.configs {
		if c.Name == name {
			cfg = c
		}
	}
	if !t.networkChecked {
		// kind makes its Docker network "kind" at the first create and never removes it.
		t.networkChecked = true
		t.madeNetwork = exec.Command("docker", "network", "inspect", kindNetwork).Run() != nil
	}
	if t.dir == "" {
		dir, err := os.MkdirTemp("", stateDirPrefix)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		t.dir = dir
	}
	lc := &liveCluster{name: clusterName(t.opts.NameTag, name), ready: make(chan struct{})}
	// The sweeper finds the kubeconfig from the cluster's name (sweep.go).
	lc.kubeconfig = filepath.Join(t.dir, strings.TrimPrefix(lc.name, "volperm-")+".kubeconfig")
	// Registered before Create: a failed or interrupted create leaves a node container to delete.
	t.live[name] = lc
	// Recorded before Create too: a killed run's clusters are deleted by the next run (sweep.go).
	t.state.Owner = owner.Self()
	t.state.Clusters = append(t.state.Clusters, lc.name)
	t.state.MadeNetwork = t.madeNetwork
	if err := writeState(t.dir, t.state); err != nil {
		lc.err = err
		close(lc.ready)
		t.mu.Unlock()
		return nil, err
	}
	t.mu.Unlock()
	lc.err = t.create(ctx, lc, cfg, name)
	close(lc.ready)
	if lc.err != nil {
		return nil, lc.err
	}
	return lc, nil
}

// create makes the cluster lc of config cfg (named name) and its cluster targets.
func (t *Target) create(ctx context.Context, lc *liveCluster, cfg Config, name string) error {
	start := time.Now()
	workers := t.opts.Workers
	if len(t.opts.KubeletReleases) > 0 {
		workers = len(t.opts.KubeletReleases)
	} else if t.splitSteps {
		workers = 1
	}
	raw, err := withWorkers(cfg.Raw, workers)
	if err != nil {
		return fmt.Errorf("kind target: kind-config/%s.yaml: %w", name, err)
	}
	if cgroupfs, err := t.cgroupfsNeeded(ctx); err != nil {
		return fmt.Errorf("kind target: %w", err)
	} else if cgroupfs {
		if raw, err = withCgroupfs(raw); err != nil {
			return fmt.Errorf("kind target: kind-config/%s.yaml: %w", name, err)
		}
	}
	t.logf("creating cluster %s (config %s, %d workers, image %s)", lc.name, name, workers, t.opts.NodeImage)
	err = t.provider.Create(lc.name, kindcluster.CreateWithRawConfig(raw), kindcluster.CreateWithNodeImage(t.opts.NodeImage),
		kindcluster.CreateWithKubeconfigPath(lc.kubeconfig), kindcluster.CreateWithWaitForReady(2*time.Minute),
		kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false))
	if err != nil {
		return fmt.Errorf("kind target: create cluster %s: %w", lc.name, err)
	}
	t.logf("cluster %s created in %s", lc.name, time.Since(start).Round(100*time.Millisecond))
	all, err := t.provider.ListNodes(lc.name)
	if err != nil || len(all) != 1+workers {
		return fmt.Errorf("kind target: cluster %s: want %d nodes, have %d (%v)", lc.name, 1+workers, len(all), err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].String() < all[j].String() })
	var controlPlane nodes.Node
	var workerNodes []nodes.Node
	for _, n := range all {
		role, err := n.Role()
		if err != nil {
			return fmt.Errorf("kind target: cluster %s: node %s: %w", lc.name, n, err)
		}
		if role == "control-plane" {
			controlPlane = n
		} else {
			workerNodes = append(workerNodes, n)
		}
	}
	if controlPlane == nil {
		return fmt.Errorf("kind target: cluster %s has no control-plane node", lc.name)
	}
	lc.apiserverNode = controlPlane.String()
	ks := kubelets{full: map[string]string{}, binaries: t.opts.KubeletBinaries}
	for _, r := range t.opts.KubeletReleases {
		ks.full[framework.MinorRelease(r)] = r
	}
	extra := &apiservers{byKey: map[string]string{}} // one set per cluster: the workers share the apiserver
	newTarget := func(kubelet nodes.Node) (*cluster.Target, error) {
		control := nodeControl{apiserver: controlPlane, kubelet: kubelet, extra: extra, release: t.release()}
		var nc cluster.NodeControl = control
		if len(t.opts.KubeletReleases) > 0 {
			nc = releaseControl{nodeControl: control, kubelets: ks}
		}
		// Pinned to the kubelet's node: in kind a node's container and its Node object share the name.
		ct, err := cluster.New(ctx, cluster.Options{Kubeconfig: lc.kubeconfig, ProbeImage: t.opts.ProbeImage, Log: t.opts.Log,
			NodeControl: nc, Node: kubelet.String(), Reconfigure: !t.opts.PerCell,
			PodPerCase:        t.opts.PodPerCase,
			InstallFlexDriver: true, Timeouts: t.opts.Timeouts, Ephemeral: !t.opts.Keep})
		if err != nil {
			return nil, fmt.Errorf("kind target: cluster %s: %w", lc.name, err)
		}
		t.mu.Lock()
		lc.targets = append(lc.targets, ct)
		t.mu.Unlock()
		if r := framework.GatesMismatch(cfg.Gates, ct.Gates()); r != "" && len(t.opts.KubeletReleases) == 0 {
			return nil, fmt.Errorf("kind target: cluster %s does not run the gates of kind-config/%s.yaml: %s", lc.name, name, r)
		}
		return ct, nil
	}
	if len(t.opts.KubeletReleases) == 0 {
		kubelet := controlPlane
		if len(workerNodes) > 0 && !t.splitSteps {
			kubelet = workerNodes[0]
		}
		lc.kubeletNode = kubelet.String()
		if lc.target, err = newTarget(kubelet); err != nil {
			return err
		}
		if t.splitSteps {
			if lc.steps, err = newTarget(workerNodes[0]); err != nil {
				return err
			}
			t.logf("cluster %s: the cases with steps run on %s, the others on %s", lc.name, workerNodes[0], kubelet)
		}
		return nil
	}
	if err := t.installKubelets(ctx, lc, controlPlane, workerNodes); err != nil {
		return err
	}
	lc.byRelease = map[string]*cluster.Target{}
	for i, w := range workerNodes {
		ct, err := newTarget(w)
		if err != nil {
			return err
		}
		release := t.opts.KubeletReleases[i]
		if _, got := ct.Versions(); got != release {
			return fmt.Errorf("kind target: cluster %s: worker %s runs kubelet %s, want %s", lc.name, w, got, release)
		}
		lc.byRelease[release] = ct
	}
	return nil
}

// installKubelets gives the i-th worker the kubelet of KubeletReleases[i] (matrix.go), all at
// once, and waits until each reports its release.
func (t *Target) installKubelets(ctx context.Context, lc *liveCluster, controlPlane nodes.Node, workers []nodes.Node) error {
	start := time.Now()
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		release := t.opts.KubeletReleases[i]
		bin := t.opts.KubeletBinaries[release]
		if release == t.release() {
			continue // the node image's own
		}
		if bin == "" {
			errs[i] = fmt.Errorf("kind target: no kubelet binary of %s", release)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := installKubelet(w, release, bin, nil); err != nil {
				errs[i] = err
				return
			}
			errs[i] = kubeletVersion(ctx, controlPlane, w, release)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kind target: cluster %s: %w", lc.name, err)
	}
	t.logf("cluster %s: workers run kubelets %s (replaced in %s)", lc.name, strings.Join(t.opts.KubeletReleases, ", "), time.Since(start).Round(100*time.Millisecond))
	return nil
}

func (t *Target) deleteCluster(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lc := t.live[name]
	if lc == nil {
		return
	}
	delete(t.live, name)
	if t.opts.Keep {
		// The cluster stays: what the run made on it goes (deleting the cluster would do it).
		for _, ct := range lc.targets {
			if err := ct.Close(); err != nil {
				t.logf("cluster %s: %v", lc.name, err)
			}
		}
		// The apiservers of other gate settings go too: the kept cluster is the kind-config's.
		if lc.apiserverNode != "" {
			rm := exec.Command("docker", "exec", lc.apiserverNode, "sh", "-c", "rm -f /etc/kubernetes/manifests/volperm-apiserver-*.yaml")
			if out, err := rm.CombinedOutput(); err != nil {
				t.logf("cluster %s: remove the extra apiservers: %v %s", lc.name, err, out)
			}
		}
		t.logf("keeping cluster %s (kubeconfig %s)", lc.name, lc.kubeconfig)
		return
	}
	start := time.Now()
	if err := t.provider.Delete(lc.name, lc.kubeconfig); err != nil {
		t.logf("delete cluster %s: %v", lc.name, err)
		return
	}
	t.logf("cluster %s deleted in %s", lc.name, time.Since(start).Round(100*time.Millisecond))
}

func (t *Target) deleteAll() {
	t.mu.Lock()
	var names []string
	for n := range t.live {
		names = append(names, n)
	}
	t.mu.Unlock()
	for _, n := range names {
		t.deleteCluster(n)
	}
}

// markKept records that the run handed its clusters to the user (state.Kept), so that the next
// run's sweeper leaves them and their kubeconfigs' directory.
func (t *Target) markKept() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == "" || len(t.state.Clusters) == 0 {
		return nil
	}
	t.state.Kept = true
	if err := writeState(t.dir, t.state); err != nil {
		return err
	}
	t.logf("kept clusters %v: delete them with kind delete cluster --name NAME, then remove %s", t.state.Clusters, t.dir)
	return nil
}

// removeDir removes the kubeconfigs' directory (not with Keep: it holds the kept clusters').
func (t *Target) removeDir() error {
	t.mu.Lock()
	dir := t.dir
	t.mu.Unlock()
	if dir == "" || t.opts.Keep {
		return nil
	}
	return os.RemoveAll(dir)
}

// removeKindNetwork removes kind's Docker network; Docker refuses while a container is attached.
func removeKindNetwork() error {
	if out, err := exec.Command("docker", "network", "rm", kindNetwork).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeNetwork removes kind's Docker network when this target made it and nothing uses it
// any more (Docker refuses while a container is attached: then it stays, and is logged).
func (t *Target) removeNetwork() {
	t.mu.Lock()
	made := t.madeNetwork && !t.opts.Keep
	t.madeNetwork = false
	t.mu.Unlock()
	if !made {
		return
	}
	if err := removeKindNetwork(); err != nil {
		t.logf("docker network %s left: %v", kindNetwork, err)
		return
	}
	t.logf("docker network %s removed", kindNetwork)
}

// logger is kind's logger on Options.Log: warnings, errors and V(0) status lines.
type logger struct{ w io.Writer }

func (l logger) Warn(m string) { fmt.Fprintln(l.w, "kind: warning: "+m) }

func (l logger) Warnf(f string, a ...any) { l.Warn(fmt.Sprintf(f, a...)) }

func (l logger) Error(m string) { fmt.Fprintln(l.w, "kind: error: "+m) }

func (l logger) Errorf(f string, a ...any) { l.Error(fmt.Sprintf(f, a...)) }

func (l logger) V(v kindlog.Level) kindlog.InfoLogger { return infoLogger{w: l.w, on: v == 0} }

type infoLogger struct {
	w  io.Writer
	on bool
}

func (i infoLogger) Info(m string) {
	if i.on {
		fmt.Fprintln(i.w, "kind: "+m)
	}
}

func (i infoLogger) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }

func (i infoLogger) Enabled() bool { return i.on }
