// Package kind is the `kind` target: it creates a kind cluster from kind-config/ with
// sigs.k8s.io/kind as a library, runs the cases through the cluster target, reconfiguring the
// cluster's gates in place for each cell of the skew matrix (cluster.Options.Reconfigure), and
// deletes the cluster at the end, on failure, and when the run is interrupted (the command owns
// SIGINT and SIGTERM: they cancel the cases and Close deletes), unless asked to keep it.
// With PerCell it creates one cluster per kind-config instead (for comparison).
//
// Its files, by job: kind.go (the target, a framework.Router: options, what it runs, Close);
// configs.go (the kind-configs and their gates, per release); clusters.go (a cluster made, its
// kubelets of other releases installed, deleted; kind's Docker network and logger); cases.go
// (where a case is routed: kind's checks, then the cluster's target); percell.go (the same for
// kind:per-cell, a cluster per kind-config); matrix.go (kind@matrix's cells, routers too);
// node.go (the node control a kind node gives: gates, restarts, kubelets, by docker exec);
// cgroup.go (the cgroup driver of a cgroup v1 host); load.go (images onto the
// nodes); sweep.go (what a killed run left); env.go and register.go (flags, the factory).
package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
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
	// StepsNode gives the cluster a worker for the cases with steps (Case.After: kubelet
	// restarts and gate flips, a timeline's or a step group's) when a run has gate histories
	// beside cases without steps (splitSteps): they run there while the others run on the
	// control-plane node, both prepared at once (issue 34: a kubelet restart disturbs every
	// pod of its node, so on one node the steps' restarts and the pods created between them
	// ran after the other cases). Not with Workers, KubeletReleases or PerCell.
	StepsNode bool
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
	// cases is where the cases go, chosen once (Route): the one cluster's target (cases.go), or
	// with PerCell the target of each config's cluster (percell.go).
	cases casesTarget
	// madeNetwork: the Docker network kindNetwork did not exist before this target's first
	// cluster, so the target removes it at the end.
	networkChecked, madeNetwork bool
	// state is what sweep.go needs to delete this run's clusters if it is killed.
	state state
	// podStarts counts the probe pods of every batch so far, on every cluster (Info).
	podStarts int
	// splitSteps: the one cluster has a worker for the cases with steps (Options.StepsNode),
	// decided with its creation (shared).
	splitSteps bool
	// containerdMajor is the node image's containerd major version and cgroupfs whether its
	// nodes run the cgroupfs driver (cgroup.go), decided once.
	runtimeOnce     sync.Once
	containerdMajor int
	runtimeErr      error
	cgroupfs        bool
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
		t.cases = &perCell{t: t}
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
		r := framework.GatesMismatch(c.Gates, cfg.Gates)
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

// Route is where c goes (framework.Router): the target of c on kind's cluster (cases.go;
// percell.go), which framework.Ask asks every question of c, so that the kind target answers
// none itself.
func (t *Target) Route(*framework.Case) (framework.Target, string) { return t.cases, "" }

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
// target moves its gates from cell to cell. PerCell: a cluster per config (percell.go).
func (t *Target) Prepare(ctx context.Context, cases []*framework.Case) error {
	return t.cases.Prepare(ctx, cases)
}

// BatchesRun: the kind target prepares the whole run at once (framework.RunBatcher), as the
// cluster target does: the areas share the cluster's cells, probe pods and kubelet restarts.
func (t *Target) BatchesRun() bool { return true }

// Observe returns what Prepare observed for c, or runs c alone.
func (t *Target) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	return t.cases.Observe(ctx, c)
}

// ObserveBatch observes cases together and hands out each one's result, in their order (for
// callers that drive the target themselves).
func (t *Target) ObserveBatch(ctx context.Context, cases []*framework.Case) []cluster.Result {
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

// Close deletes every cluster still running (unless Keep).
func (t *Target) Close() error {
	t.deleteAll()
	if t.opts.Keep {
		return t.markKept()
	}
	t.removeNetwork()
	return t.removeDir()
}

func (t *Target) logf(format string, a ...any) {
	fmt.Fprintf(t.opts.Log, "kind: "+format+"\n", a...)
}

// release is the Kubernetes release of Options.NodeImage.
func (o Options) release() string {
	if o.Release != "" {
		return o.Release
	}
	return nodeimage.KubernetesVersion
}

var _ framework.RunBatcher = (*Target)(nil)
