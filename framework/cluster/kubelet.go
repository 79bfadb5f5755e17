package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/needs"
	probeimage "github.com/volperm/volperm/framework/probe/image"
)

// kubeletHalf is the node's kubelet as the node half of the target's pair (framework.BatchNode,
// docs/spec.md steps 3-8): the admitted cases' volumes set up in probe pods on the node, many
// cases a pod (plan.go), observed inside them; a batch at a time, as the suites Prepare an
// area (pod start-up dominates a cluster's time).
type kubeletHalf struct{ t *Target }

var (
	_ framework.BatchNode     = kubeletHalf{}
	_ framework.ReleaseRunner = kubeletHalf{}
)

// Info names the cluster.
func (k kubeletHalf) Info() framework.TargetInfo { return k.t.Info() }

// Close holds nothing: the target's Close cleans the cluster up.
func (k kubeletHalf) Close() error { return nil }

// RunsRelease says whether the node's kubelet is release, or can be made it (a node control
// that swaps kubelets: SupportsNode says which releases it has).
func (k kubeletHalf) RunsRelease(release string) bool {
	_, swaps := k.t.kubeletReleases()
	return release == k.t.now.Release || swaps
}

// Batching: the node always observes cases together.
func (k kubeletHalf) Batching() bool { return true }

// ObserveBatch observes admitted cases together (batch.go).
func (k kubeletHalf) ObserveBatch(ctx context.Context, cases []framework.NodeCase) []framework.NodeResult {
	return k.t.observeAdmitted(ctx, cases)
}

// ObserveNode observes one admitted case: a batch of one.
func (k kubeletHalf) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	return k.t.observeAdmitted(ctx, []framework.NodeCase{{Case: c, Admitted: a}})[0]
}

// SupportsNode says whether the node's kubelet runs with (or, reconfiguring, can be given) c's
// kubelet gates, can go through c's steps, and sets up c's volumes (Runnable).
func (k kubeletHalf) SupportsNode(c *framework.Case, a framework.Admitted) (bool, string) {
	t := k.t
	if r := t.gatesGap(c, false); r != "" {
		return false, r
	}
	if framework.ChangesKubeletRelease(c) {
		releases, ok := t.kubeletReleases()
		if !ok || !t.opts.Reconfigure {
			return false, "a kubeletRelease step replaces the node's kubelet: only a target that has the kubelet binaries of other releases and controls the node does (kind@matrix)"
		}
		for _, s := range append([]framework.Step{{KubeletRelease: c.Releases.Of(false)}}, c.After...) {
			if s.KubeletRelease != "" && !slices.Contains(releases, s.KubeletRelease) {
				return false, fmt.Sprintf("needs the kubelet of %s, which this target cannot give node %s (it has %s)", s.KubeletRelease, t.node, strings.Join(releases, ", "))
			}
		}
	}
	if r := t.runnerAsImageVolume(c); r != "" {
		return false, r
	}
	return settable(c, t.opts.InstallFlexDriver, t.met()...)
}

// runnerAsImageVolume says why c cannot run when its image volume of the probe image would be
// the runner image ("" when it can): a run inside the cluster whose probe pods run the runner's
// own image (volperm runner without --probe-image) mounts that image, whose files are not the
// probe image's the case expects (docs/spec.md [mounts.image-volume]).
func (t *Target) runnerAsImageVolume(c *framework.Case) string {
	if c.Pod == nil || c.AdmissionOnly || !slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Image != nil && v.Image.Reference == framework.ProbeImage
	}) {
		return ""
	}
	if repo := probeimage.Repository(t.opts.ProbeImage); repo != probeimage.RunnerRepo && !strings.HasSuffix(repo, "/"+probeimage.RunnerRepo) {
		return ""
	}
	return fmt.Sprintf("an image volume of the probe image: this run's probe pods run the runner image %s, whose files are not the probe image's; give the probe image (--probe-image; under hydrophone --extra-args --volperm-probe-image=%s:TAG)", t.opts.ProbeImage, probeimage.Repo)
}

// met are the labels of the node needs (framework/needs) the cluster's nodes meet beyond a
// stock node's: which side of each runtime capability (needs.Capabilities) they are on.
func (t *Target) met() []string {
	met := needs.Met(func(c needs.Capability) bool { return t.runtime[c.Name] })
	// docs/spec.md [mounts.bind-mount-options]: the kubelet declares the node feature only with
	// its gate on. With the gate off now, a target that sets gates in place (kind) turns it on
	// for the case and takes the runtime to lack mount options (no runtime it runs reports
	// them: containerd 2.4.2, 1.6); one that cannot meets neither side.
	if !t.runtime[string(framework.RuntimeMountOptions)] && !t.now.Gates.Kubelet[framework.GateVolumeBindMountOptions] && !t.opts.Reconfigure {
		met = slices.DeleteFunc(met, func(l string) bool { return l == needs.RuntimeWithoutMountOptions })
	}
	if t.opts.NodeControl != nil {
		met = append(met, needs.NodeControl)
	}
	return met
}
