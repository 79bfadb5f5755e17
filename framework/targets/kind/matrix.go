package kind

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
)

// Release skew on real nodes (kind@matrix, docs/releases.md "Release skew on kind"): one
// cluster whose control plane runs the node image's release and which has one worker per kubelet
// release (Options.KubeletReleases). kubeadm of the node image's release joins every worker;
// then a worker of another release has its kubelet binary replaced by that release's and
// restarted, as kubeadm's kinder skew jobs run older kubelets under a newer control plane. Each
// kubelet release's cells (framework.Matrix) run on its worker, through a cluster target pinned
// to it; the apiservers are the cluster's, one per gate setting (node.go SetAPIServerGates).

// MatrixArg is the argument of the release-skew cluster: kind@matrix.
const MatrixArg = "matrix"

// MatrixReleases are the kubelet releases of kind@matrix whose control plane runs release,
// newest first: release and each given release the skew policy allows under it (kubelet not
// newer, at most framework.MaxKubeletSkew minors older).
func MatrixReleases(release string, releases []string) []string {
	api := framework.ReleaseMinor(release)
	out := []string{release}
	for i := len(releases) - 1; i >= 0; i-- {
		r := releases[i]
		m := framework.ReleaseMinor(r)
		if m < api && api-m <= framework.MaxKubeletSkew {
			out = append(out, r)
		}
	}
	return out
}

// Matrix is the target's cells, one per kubelet release, all on the target's one cluster
// (created by the first batch): framework.Matrix hands each cell its cases. Its Close closes t.
func (t *Target) Matrix() *framework.Matrix {
	api := framework.MinorRelease(t.release())
	by := map[framework.Releases]framework.Target{}
	var cells []framework.Releases
	for _, r := range t.opts.KubeletReleases {
		c := &cell{t: t, release: r, cases: onCluster{t: t, release: r, supports: t.supportsOn(r)}}
		rel := framework.Releases{APIServer: api, Kubelet: framework.MinorRelease(r)}
		by[rel] = c
		cells = append(cells, rel)
	}
	// In parallel: each cell has its worker, the apiservers are one per gate setting (started
	// once, under a lock), and the first cell to come creates the cluster the others wait for.
	return framework.NewMatrix(Name, cells, by, []io.Closer{t}).InParallel()
}

// cell is the cases of one kubelet release: they run on that release's worker (Route).
type cell struct {
	t       *Target
	release string
	cases   onCluster
}

func (c *cell) Info() framework.TargetInfo { return cellInfo(c.t, c.release) }

// cellInfo names the cell of kubelet release of t.
func cellInfo(t *Target, release string) framework.TargetInfo {
	return framework.TargetInfo{Name: Name, Version: release, Details: map[string]string{
		"apiserver": t.release(), "kubelet": release, "nodeImage": t.opts.NodeImage}}
}

// Route is where k goes (framework.Router): the target of k on the worker of the cell's
// release, which framework.Ask asks every question of k.
func (c *cell) Route(*framework.Case) (framework.Target, string) { return c.cases, "" }

func (c *cell) Supports(k *framework.Case) (bool, string) { return c.cases.Supports(k) }

func (c *cell) Prepare(ctx context.Context, cases []*framework.Case) error {
	return c.cases.Prepare(ctx, cases)
}

// BatchesRun: the cell's cases on its worker, as the kind target's (framework.RunBatcher).
func (c *cell) BatchesRun() bool { return true }

func (c *cell) Observe(ctx context.Context, k *framework.Case) (*framework.Observation, error) {
	return c.cases.Observe(ctx, k)
}

// Close does nothing: the matrix closes the target, which deletes the cluster.
func (c *cell) Close() error { return nil }

var (
	_ framework.RunBatcher = (*cell)(nil)
	_ framework.Router     = (*cell)(nil)
)

// kubeletBinary is where a replaced kubelet's binary goes on a node: the path of the kubelet
// systemd unit's ExecStart (kind's images/base/files/etc/systemd/system/kubelet.service).
const kubeletBinary = "/usr/bin/kubelet"

// ownKubelet is where a worker keeps the node image's kubelet before it first replaces it, so
// that a kubeletRelease step can give it back.
const ownKubelet = "/usr/local/bin/kubelet-of-node-image"

// installKubelet makes node run the kubelet of release: bin copied in ("" = the node image's own,
// kept at ownKubelet), renamed over the node's (the running one keeps its inode); the
// configuration's feature gates become gates, or with gates nil keep only the ones that release
// has (a kubelet refuses a gate it does not know); then the kubelet restarts. kubeletVersion then
// waits until the Node reports the release.
func installKubelet(node nodes.Node, release, bin string, gates map[string]bool) error {
	tmp := kubeletBinary + ".volperm"
	keep := node.Command("sh", "-c", `[ -e "$1" ] || cp "$2" "$1"`, "sh", ownKubelet, kubeletBinary)
	if err := keep.Run(); err != nil {
		return fmt.Errorf("keep the node image's kubelet on %s: %w", node, err)
	}
	if bin == "" {
		if err := node.Command("cp", ownKubelet, tmp).Run(); err != nil {
			return fmt.Errorf("the kubelet of %s on %s: %w", release, node, err)
		}
	} else {
		f, err := os.Open(bin)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := node.Command("sh", "-c", `cat > "$1" && chmod 0755 "$1" && "$1" --version`, "sh", tmp).SetStdin(f).Run(); err != nil {
			return fmt.Errorf("copy the kubelet of %s into %s: %w", release, node, err)
		}
	}
	err := editKubeletConfig(node, func(raw []byte) ([]byte, error) {
		if gates == nil {
			return gatesOfRelease(raw, release)
		}
		return withKubeletGates(raw, gates)
	})
	if err != nil {
		return err
	}
	if err := node.Command("sh", "-c", `mv "$1" "$2" && systemctl restart kubelet`, "sh", tmp, kubeletBinary).Run(); err != nil {
		return fmt.Errorf("start the kubelet of %s on %s: %w", release, node, err)
	}
	return nil
}

// kubelets are the kubelet releases a kind@matrix cluster has: "v1.N" -> v1.N.P, and the binary
// of each but the node image's own ("").
type kubelets struct {
	full     map[string]string
	binaries map[string]string
}

// releaseControl is the nodeControl of a kind@matrix worker: it can also give the node the
// kubelet of any release the cluster has (cluster.KubeletReleaser), for kubeletRelease steps.
type releaseControl struct {
	nodeControl
	kubelets kubelets
}

// KubeletReleases are the releases ("v1.N") the cluster has kubelets of.
func (r releaseControl) KubeletReleases() []string {
	var out []string
	for m := range r.kubelets.full {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// SetKubeletRelease installs the kubelet of release with gates and waits until the API reports
// it.
func (r releaseControl) SetKubeletRelease(ctx context.Context, release string, gates map[string]bool) error {
	full, ok := r.kubelets.full[release]
	if !ok {
		return fmt.Errorf("no kubelet of %s in this cluster (it has %s)", release, strings.Join(r.KubeletReleases(), ", "))
	}
	if gates == nil {
		gates = map[string]bool{}
	}
	if err := installKubelet(r.kubelet, full, r.kubelets.binaries[full], gates); err != nil {
		return err
	}
	return kubeletVersion(ctx, r.apiserver, r.kubelet, full)
}

var _ cluster.KubeletReleaser = releaseControl{}

// gatesOfRelease is a kubelet configuration without the feature gates volperm knows that
// release lacks (framework.GatesOfRelease), the rest kept.
func gatesOfRelease(raw []byte, release string) ([]byte, error) {
	var cfg struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	return withKubeletGates(raw, framework.GatesOfRelease(cfg.FeatureGates, release))
}

// kubeletVersion waits until the API reports node's kubelet as release and Ready (asked with
// the control plane's kubectl); on timeout it says what the kubelet last logged.
func kubeletVersion(ctx context.Context, controlPlane, node nodes.Node, release string) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		var out bytes.Buffer
		err := controlPlane.CommandContext(ctx, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "get", "node", node.String(),
			"-o", `jsonpath={.status.nodeInfo.kubeletVersion} {.status.conditions[?(@.type=="Ready")].status}`).SetStdout(&out).Run()
		last = strings.TrimSpace(out.String())
		if err == nil && last == release+" True" {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Second)
	}
	var journal bytes.Buffer
	_ = node.Command("journalctl", "-u", "kubelet", "-n", "15", "--no-pager").SetStdout(&journal).Run()
	return fmt.Errorf("node %s does not report a Ready kubelet %s after 2 min (it reports %q); its kubelet logged:\n%s", node, release, last, journal.String())
}
