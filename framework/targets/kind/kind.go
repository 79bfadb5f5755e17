// Package kind is the `kind` target: it creates a kind cluster from kind-config/ with
// sigs.k8s.io/kind as a library, runs the cases through the cluster target, reconfiguring the
// cluster's gates in place for each cell of the skew matrix (cluster.Options.Reconfigure), and
// deletes the cluster at the end, on failure, and when the run is interrupted (the command owns
// SIGINT and SIGTERM: they cancel the cases and Close deletes), unless asked to keep it.
// With PerCell it creates one cluster per kind-config instead (for comparison).
package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindlog "sigs.k8s.io/kind/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/knowndiff"
	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
	kindconfig "github.com/volperm/volperm/kind-config"
)

// Name is the target's registry name.
const Name = "kind"

// Options configure the target.
type Options struct {
	// NodeImage is the kind node image (nodeimage.Build's result).
	NodeImage string
	// ProbeImage is the probe image preloaded into NodeImage.
	ProbeImage string
	// Keep leaves the clusters running (their names and kubeconfigs are logged).
	Keep bool
	// PerCell creates one cluster per kind-config that the cases' gates need (each deleted
	// when its cases are done) instead of reconfiguring one cluster in place.
	PerCell bool
	// PodPerCase gives every case a probe pod of its own (cluster.Options.PodPerCase).
	PodPerCase bool
	// Timeouts bound pod starts and apiserver outages (cluster.Timeouts; zero = defaults).
	Timeouts cluster.Timeouts
	// Workers adds worker nodes to each kind-config (default none: one node). The probe pods
	// then run on the first worker and the apiserver is alone on the control-plane node, so
	// that the node of the pods can be stopped or paused while the apiserver answers (the
	// fault-injection tests).
	Workers int
	// KubeletReleases (kind@matrix, matrix.go) give the cluster one worker per release
	// (v1.N.P), instead of Workers; KubeletBinaries has the kubelet binary of each release
	// but the node image's (k8srelease.Kubelet). Each release's cells run on its worker.
	KubeletReleases []string
	KubeletBinaries map[string]string
	// Release is the Kubernetes release of NodeImage ("" = nodeimage.KubernetesVersion): the
	// apiserver's, and the kubelets' but those of KubeletReleases.
	Release string
	// NameTag goes into the clusters' names, volperm-TAG-CONFIG ("" = volperm-CONFIG), so that
	// two kind targets on one machine do not collide.
	NameTag string
	// Log receives progress lines (nil = os.Stderr).
	Log io.Writer
}

// Config is one kind cluster configuration and the gates it gives the components.
type Config struct {
	Name  string
	Raw   []byte
	Gates framework.Gates
}

// Configs reads the embedded kind-config/*.yaml and the gates each one sets.
func Configs() ([]Config, error) {
	files, err := fs.Glob(kindconfig.Configs, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Config
	for _, f := range files {
		raw, err := fs.ReadFile(kindconfig.Configs, f)
		if err != nil {
			return nil, err
		}
		g, err := configGates(raw)
		if err != nil {
			return nil, fmt.Errorf("kind-config/%s: %w", f, err)
		}
		out = append(out, Config{Name: strings.TrimSuffix(f, ".yaml"), Raw: raw, Gates: g})
	}
	return out, nil
}

// configGates reads the gates of a kind config's kubeadmConfigPatches: the apiserver's
// --feature-gates (ClusterConfiguration v1beta4 extraArgs) and the KubeletConfiguration's
// featureGates. A gate not named there has its default.
func configGates(raw []byte) (framework.Gates, error) {
	var cfg struct {
		Patches []string `json:"kubeadmConfigPatches"`
	}
	g := framework.Gates{APIServer: map[string]bool{}, Kubelet: map[string]bool{}}
	for name, def := range framework.KnownGates {
		g.APIServer[name], g.Kubelet[name] = def, def
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return g, err
	}
	for _, p := range cfg.Patches {
		var doc struct {
			Kind      string `json:"kind"`
			APIServer struct {
				ExtraArgs []struct{ Name, Value string } `json:"extraArgs"`
			} `json:"apiServer"`
			FeatureGates map[string]bool `json:"featureGates"`
		}
		if err := yaml.Unmarshal([]byte(p), &doc); err != nil {
			return g, fmt.Errorf("kubeadmConfigPatches: %w", err)
		}
		switch doc.Kind {
		case "ClusterConfiguration":
			for _, a := range doc.APIServer.ExtraArgs {
				if a.Name != "feature-gates" {
					continue
				}
				gates, err := parseGateFlag(a.Value)
				if err != nil {
					return g, fmt.Errorf("apiserver %w", err)
				}
				maps.Copy(g.APIServer, gates)
			}
		case "KubeletConfiguration":
			for k, v := range doc.FeatureGates {
				g.Kubelet[k] = v
			}
		}
	}
	return g, nil
}

// configOfRelease is cfg for a cluster of release: the feature gates volperm knows that the
// release lacks are left out of the apiserver's --feature-gates and the KubeletConfiguration's
// featureGates (its components refuse a gate they do not know: framework.GatesOfRelease), and
// out of cfg.Gates. The default release's configs are returned as they are.
func configOfRelease(cfg Config, release string) (Config, error) {
	if release == nodeimage.KubernetesVersion {
		return cfg, nil
	}
	var doc map[string]any
	if err := yaml.Unmarshal(cfg.Raw, &doc); err != nil {
		return cfg, err
	}
	patches, _ := doc["kubeadmConfigPatches"].([]any)
	for i, p := range patches {
		text, _ := p.(string)
		var patch map[string]any
		if err := yaml.Unmarshal([]byte(text), &patch); err != nil {
			return cfg, fmt.Errorf("kubeadmConfigPatches: %w", err)
		}
		changed := false
		switch patch["kind"] {
		case "ClusterConfiguration":
			api, _ := patch["apiServer"].(map[string]any)
			args, _ := api["extraArgs"].([]any)
			var keep []any
			for _, a := range args {
				arg, _ := a.(map[string]any)
				value, _ := arg["value"].(string)
				if arg["name"] != "feature-gates" {
					keep = append(keep, a)
					continue
				}
				changed = true
				gates, err := parseGateFlag(value)
				if err != nil {
					return cfg, err
				}
				if gates = framework.GatesOfRelease(gates, release); len(gates) > 0 {
					arg["value"] = gateFlag(gates)
					keep = append(keep, arg)
				}
			}
			if changed {
				api["extraArgs"] = keep
			}
		case "KubeletConfiguration":
			out, err := gatesOfRelease([]byte(text), release)
			if err != nil {
				return cfg, err
			}
			patches[i] = string(out)
		}
		if changed {
			out, err := yaml.Marshal(patch)
			if err != nil {
				return cfg, err
			}
			patches[i] = string(out)
		}
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return cfg, err
	}
	return Config{Name: cfg.Name, Raw: raw, Gates: framework.Gates{
		APIServer: framework.GatesOfRelease(cfg.Gates.APIServer, release),
		Kubelet:   framework.GatesOfRelease(cfg.Gates.Kubelet, release)}}, nil
}

// Target runs cases on kind clusters it creates.
type Target struct {
	opts    Options
	configs []Config
	dir     string // kubeconfigs, made with the first cluster

	// startMu makes choosing the one cluster's config and creating it one step (shared).
	startMu  sync.Mutex
	mu       sync.Mutex
	provider *kindcluster.Provider
	live     map[string]*liveCluster // by config name
	// cases is where the cases go, chosen once: the one cluster's target (cases.go), or with
	// PerCell the Batch that keeps what each config's cluster observed before it was deleted.
	cases interface {
		framework.Batcher
		Supports(*framework.Case) (bool, string)
		Observe(context.Context, *framework.Case) (*framework.Observation, error)
	}
	// madeNetwork: the Docker network kindNetwork did not exist before this target's first
	// cluster, so the target removes it at the end.
	networkChecked, madeNetwork bool
	// state is what sweep.go needs to delete this run's clusters if it is killed.
	state state
	// podStarts counts the probe pods of every batch so far, on every cluster (Info).
	podStarts int
	// containerdMajor is the node image's containerd major version and cgroupfs whether its
	// nodes run the cgroupfs driver (cgroup.go), decided once.
	runtimeOnce     sync.Once
	containerdMajor int
	runtimeErr      error
	cgroupfs        bool
}

// kindNetwork is the Docker network kind puts its nodes on.
const kindNetwork = "kind"

type liveCluster struct {
	name       string
	kubeconfig string
	target     *cluster.Target
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

// New reads the configs; clusters are created when cases need them.
func New(opts Options) (*Target, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.NodeImage == "" || opts.ProbeImage == "" {
		return nil, errors.New("kind target: a node image and a probe image are needed (volperm cluster image)")
	}
	cfgs, err := Configs()
	if err != nil {
		return nil, fmt.Errorf("kind target: %w", err)
	}
	for i := range cfgs {
		if cfgs[i], err = configOfRelease(cfgs[i], opts.release()); err != nil {
			return nil, fmt.Errorf("kind target: kind-config/%s.yaml for Kubernetes %s: %w", cfgs[i].Name, opts.release(), err)
		}
	}
	t := &Target{opts: opts, configs: cfgs, live: map[string]*liveCluster{}}
	t.cases = onCluster{t: t, supports: t.supportsOn(t.release())}
	if opts.PerCell {
		t.cases = cluster.NewBatch(t.observePerCell, t.supportsOn(t.release()))
	}
	t.provider = kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{t.opts.Log}))
	return t, nil
}

// release is the Kubernetes release of the node image.
func (t *Target) release() string { return t.opts.release() }

// Releases are the cluster's, the node image's release for both components: the cases that
// name none run as its cells (framework.RunAsReleases), the v1.37 ones as they are.
func (t *Target) Releases() framework.Releases {
	m := framework.MinorRelease(t.release())
	return framework.Releases{APIServer: m, Kubelet: m}
}

// NotApplicable says why c is not a case of the cluster (framework.NotApplicable, which asks
// Releases first): what the cluster's nodes are (cluster.Target.NotApplicable: the needs they do
// not meet, runtime-defined), once the cluster exists; "" before.
func (t *Target) NotApplicable(c *framework.Case) string {
	if lc := t.created(); lc != nil && lc.target != nil {
		return lc.target.NotApplicable(c)
	}
	return ""
}

// Info names the target and its images.
func (t *Target) Info() framework.TargetInfo {
	d := map[string]string{"nodeImage": t.opts.NodeImage, "probeImage": t.opts.ProbeImage,
		"clusters": "one, reconfigured in place per skew cell", "pods": "batched"}
	if t.opts.PerCell {
		d["clusters"] = "one per kind-config"
	}
	if t.opts.PodPerCase {
		d["pods"] = "one per case"
	}
	t.mu.Lock()
	d["podStarts"] = strconv.Itoa(t.podStarts)
	t.mu.Unlock()
	if t.cgroupfs {
		d["cgroupDriver"] = "cgroupfs (cgroup v1 host, containerd 2: docs/kind.md)"
	}
	return framework.TargetInfo{Name: Name, Version: t.release(), Details: d}
}

// countPods adds n probe pods to the target's count.
func (t *Target) countPods(n int) {
	t.mu.Lock()
	t.podStarts += n
	t.mu.Unlock()
}

// ConfigFor is the config whose gates are the ones c needs.
func (t *Target) ConfigFor(c *framework.Case) (Config, string) {
	var why []string
	for _, cfg := range t.configs {
		r := cluster.GatesMismatch(c.Gates, cfg.Gates)
		if r == "" {
			return cfg, ""
		}
		why = append(why, cfg.Name+": "+r)
	}
	return Config{}, "no kind-config has the case's gates (" + strings.Join(why, "; ") + ")"
}

// nodeGates are the volperm gates the v1.37 components have (v1.37 pkg/features): the only
// ones a reconfigured cluster can turn on, those of its release (framework.GatesOfRelease).
var nodeGates = func() map[string]bool {
	out := map[string]bool{}
	for _, g := range framework.UpstreamGates() {
		out[g] = true
	}
	return out
}()

// Supports says whether the target runs c: kind's own check, then the cluster's once it
// exists (a prepared case is not asked again).
func (t *Target) Supports(c *framework.Case) (bool, string) { return t.cases.Supports(c) }

// supportsOn says whether the cluster can be given c's gates (PerCell: a kind-config has them)
// and a stock cluster whose apiserver runs the node image's release and whose kubelet runs
// kubelet can run c.
func (t *Target) supportsOn(kubelet string) func(c *framework.Case) (bool, string) {
	return func(c *framework.Case) (bool, string) {
		if r := cluster.ReleasesMismatch(c, t.release(), kubelet); r != "" {
			return false, r
		}
		if framework.ChangesKubeletRelease(c) && len(t.opts.KubeletReleases) == 0 {
			return false, "a kubeletRelease step replaces the node's kubelet by another release's: kind@matrix has the kubelets of other releases, this cluster only its own"
		}
		return t.supports(c)
	}
}

// supports says whether the cluster can be given c's gates (PerCell: a kind-config has them)
// and a stock cluster can run c.
func (t *Target) supports(c *framework.Case) (bool, string) {
	if t.opts.PerCell {
		if _, why := t.ConfigFor(c); why != "" {
			return false, why
		}
	} else {
		gates := framework.GatesOfRelease(nodeGates, t.release())
		for _, comp := range []struct {
			name  string
			gates map[string]bool
		}{{"apiserver", c.Gates.APIServer}, {"kubelet", c.Gates.Kubelet}} {
			for g, on := range comp.gates {
				if on && !gates[g] {
					return false, fmt.Sprintf("needs %s gate %s=true, not a gate of Kubernetes %s", comp.name, g, t.release())
				}
			}
		}
	}
	return cluster.Runnable(c, true, t.nodeNeeds()...)
}

// Prepare has the target's one cluster prepare cases (framework.Batcher), created by the first
// batch from the kind-config that most of its cases need and kept until Close; the cluster
// target moves its gates from cell to cell. PerCell: a cluster per config (observePerCell).
func (t *Target) Prepare(ctx context.Context, cases []*framework.Case) error {
	return t.cases.Prepare(ctx, cases)
}

// Observe returns what Prepare observed for c, or runs c alone.
func (t *Target) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	return t.cases.Observe(ctx, c)
}

// ObserveBatch observes cases together and hands out each one's result, in their order (for
// callers that drive the target themselves).
func (t *Target) ObserveBatch(ctx context.Context, cases []*framework.Case) []cluster.Result {
	if t.opts.PerCell {
		return t.observePerCell(ctx, cases)
	}
	return cluster.ObserveEach(ctx, t, cases)
}

// Cluster is the target's one cluster (created, if need be, from the kind-config most of
// cases need), for callers that drive the cluster target themselves. Not with PerCell.
func (t *Target) Cluster(ctx context.Context, cases []*framework.Case) (*cluster.Target, error) {
	if t.opts.PerCell {
		return nil, errors.New("kind target: one cluster per config has no single cluster")
	}
	lc, err := t.shared(ctx, cases)
	if err != nil {
		return nil, err
	}
	return lc.target, nil
}

// NodeContainers are the node containers of the target's one cluster: the control-plane's
// (the apiserver's) and the one the probe pods run on (the same without workers); "" before
// the cluster is created.
func (t *Target) NodeContainers() (apiserver, kubelet string) {
	lc := t.one()
	return lc.apiserverNode, lc.kubeletNode
}

// Kubeconfig is the kubeconfig file of the target's one cluster ("" before it is created).
func (t *Target) Kubeconfig() string { return t.one().kubeconfig }

// ClusterName is the kind cluster name of the target's one cluster ("" before it is created).
func (t *Target) ClusterName() string { return t.one().name }

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
	return t.cluster(ctx, t.startConfig(cases))
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

// observePerCell runs cases one config at a time (configs in name order): create the cluster,
// run its cases in one batch, delete it (unless Keep).
func (t *Target) observePerCell(ctx context.Context, cases []*framework.Case) []cluster.Result {
	out := make([]cluster.Result, len(cases))
	groups := map[string][]int{}
	for i, c := range cases {
		cfg, why := t.ConfigFor(c)
		if why != "" {
			out[i].Err = fmt.Errorf("kind target: %s", why)
			continue
		}
		groups[cfg.Name] = append(groups[cfg.Name], i)
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		idx := groups[n]
		lc, err := t.cluster(ctx, n)
		if err == nil {
			batch := make([]*framework.Case, len(idx))
			for j, i := range idx {
				batch[j] = cases[i]
			}
			start, pods := time.Now(), lc.target.PodStarts()
			res := lc.target.ObserveBatch(ctx, batch)
			t.countPods(lc.target.PodStarts() - pods)
			t.logf("%s: %d cases, %d pod starts, in %s", lc.name, len(batch), lc.target.PodStarts()-pods, time.Since(start).Round(100*time.Millisecond))
			for j, i := range idx {
				out[i] = res[j]
			}
		} else {
			for _, i := range idx {
				out[i].Err = err
			}
		}
		if !t.opts.Keep {
			t.deleteCluster(n)
		}
	}
	return out
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
		if r := cluster.GatesMismatch(cfg.Gates, ct.Gates()); r != "" && len(t.opts.KubeletReleases) == 0 {
			return nil, fmt.Errorf("kind target: cluster %s does not run the gates of kind-config/%s.yaml: %s", lc.name, name, r)
		}
		return ct, nil
	}
	if len(t.opts.KubeletReleases) == 0 {
		kubelet := controlPlane
		if len(workerNodes) > 0 {
			kubelet = workerNodes[0]
		}
		lc.kubeletNode = kubelet.String()
		if lc.target, err = newTarget(kubelet); err != nil {
			return err
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

// Close deletes every cluster still running (unless Keep).
func (t *Target) Close() error {
	t.deleteAll()
	if t.opts.Keep {
		return t.markKept()
	}
	t.removeNetwork()
	return t.removeDir()
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

func (t *Target) logf(format string, a ...any) {
	fmt.Fprintf(t.opts.Log, "kind: "+format+"\n", a...)
}

// logger is kind's logger on Options.Log: warnings, errors and V(0) status lines.
type logger struct{ w io.Writer }

func (l logger) Warn(m string)                        { fmt.Fprintln(l.w, "kind: warning: "+m) }
func (l logger) Warnf(f string, a ...any)             { l.Warn(fmt.Sprintf(f, a...)) }
func (l logger) Error(m string)                       { fmt.Fprintln(l.w, "kind: error: "+m) }
func (l logger) Errorf(f string, a ...any)            { l.Error(fmt.Sprintf(f, a...)) }
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
func (i infoLogger) Enabled() bool            { return i.on }

// KnownDifference explains a failure the real v1.37 kubelet is known for (knowndiff).
func (t *Target) KnownDifference(c *framework.Case) (string, bool) { return knowndiff.Explain(c) }

// release is the Kubernetes release of Options.NodeImage.
func (o Options) release() string {
	if o.Release != "" {
		return o.Release
	}
	return nodeimage.KubernetesVersion
}
