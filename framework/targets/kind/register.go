package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

func init() {
	framework.RegisterTarget(Name, "a kind cluster created here from kind-config/ on a Kubernetes v1.37 node image built offline (cached), its gates reconfigured in place per skew cell, deleted after the run (--keep keeps it); kind:per-cell makes one cluster per kind-config, kind:pod-per-case one probe pod per case; kind@matrix one cluster whose workers run the kubelet of every release the skew policy allows under it (older ones built from the module proxy, cached), each release's cells on its worker", newTarget)
}

// parseArg reads the target's argument: a comma-separated list of per-cell and pod-per-case.
func parseArg(arg string, o *Options) error {
	if arg == "" {
		return nil
	}
	for _, w := range strings.Split(arg, ",") {
		switch w {
		case "per-cell":
			o.PerCell = true
		case "pod-per-case":
			o.PodPerCase = true
		case MatrixArg:
			o.KubeletReleases = MatrixReleases(o.release(), k8srelease.Releases)
		default:
			return fmt.Errorf("kind target: unknown option %q in %q: write kind, kind:per-cell, kind:pod-per-case, kind:per-cell,pod-per-case or kind@matrix", w, "kind:"+arg)
		}
	}
	if o.PerCell && len(o.KubeletReleases) > 0 {
		return fmt.Errorf("kind target: %q: kind@matrix is one cluster, not one per cell; leave per-cell out", arg)
	}
	return nil
}

// newTarget builds the images it is not given (cached: a warm build takes a second), then the
// target.
func newTarget(o framework.TargetOptions) (framework.Target, error) {
	timeouts, err := cluster.TimeoutsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("kind target: %w", err)
	}
	opts := Options{Keep: o.Flag(FlagKeep) == "true", Log: os.Stderr, Timeouts: timeouts,
		NodeImage: o.Flag(FlagNodeImage), ProbeImage: o.Flag(cluster.FlagProbeImage), Release: o.Flag(FlagKubernetesVersion)}
	if opts.Release != "" {
		if err := k8srelease.CheckRelease(opts.Release); err != nil {
			return nil, fmt.Errorf("kind target: --%s: %w", FlagKubernetesVersion, err)
		}
	}
	runtime := o.Flag(FlagRuntime)
	if err := nodeimage.CheckRuntime(runtime); err != nil {
		return nil, fmt.Errorf("kind target: --%s: %w", FlagRuntime, err)
	}
	if runtime != "" && opts.NodeImage != "" {
		return nil, fmt.Errorf("kind target: --%s and --%s: a node image has its runtime; give one of them", FlagRuntime, FlagNodeImage)
	}
	if err := parseArg(o.Arg, &opts); err != nil {
		return nil, err
	}
	// The cases with steps on a worker of their own (Options.StepsNode), but where the nodes
	// are the point: kind@matrix's workers, kind:per-cell's clusters of one node.
	opts.StepsNode = !opts.PerCell && len(opts.KubeletReleases) == 0
	opts.NameTag = nameTag(opts, runtime)
	if opts.NodeImage == "" || opts.ProbeImage == "" {
		// The command owns the signals: a Ctrl-C during the build cancels o.Interrupt.
		images, err := BuildImages(o.InterruptContext(), nodeimage.Options{Log: os.Stderr, Release: opts.Release, Runtime: runtime})
		if err != nil {
			return nil, err
		}
		if opts.NodeImage == "" {
			opts.NodeImage = images.Image
		}
		if opts.ProbeImage == "" {
			opts.ProbeImage = images.ProbeImage
		}
	}
	if len(opts.KubeletReleases) == 0 {
		return New(opts)
	}
	opts.KubeletBinaries = map[string]string{}
	for _, r := range opts.KubeletReleases {
		if r == opts.release() {
			continue
		}
		if opts.KubeletBinaries[r], err = k8srelease.Kubelet(o.InterruptContext(), r, os.Stderr); err != nil {
			return nil, fmt.Errorf("kind target: %w", err)
		}
	}
	t, err := New(opts)
	if err != nil {
		return nil, err
	}
	return t.Matrix(), nil
}

// nameTag tags the clusters of a kind target that is not the default one by what makes it
// differ (its release, its runtime, kind@matrix), so that runs of two kinds of kind target on
// one machine at once (CI's two kind lanes) make clusters of different names: volperm-CONFIG for
// the default target, volperm-v1-36-3-debian-matrix-CONFIG at most.
func nameTag(opts Options, runtime string) string {
	var tag []string
	if r := opts.Release; r != "" && r != nodeimage.KubernetesVersion {
		tag = append(tag, strings.ReplaceAll(r, ".", "-"))
	}
	if runtime != "" && runtime != nodeimage.RuntimeContainerd2 {
		tag = append(tag, runtime)
	}
	if len(opts.KubeletReleases) > 0 {
		tag = append(tag, "matrix")
	}
	return strings.Join(tag, "-")
}

// Images are the probe image and the node image with it preloaded.
type Images struct {
	ProbeImage string `json:"probeImage"`
	*nodeimage.Result
}

// BuildImages builds (or finds in the cache) the probe image and the kind node image that
// preloads it. It needs this repository's checkout: the node's Kubernetes binaries are built from
// build/kindnode, found from the working directory upwards.
func BuildImages(ctx context.Context, opts nodeimage.Options) (*Images, error) {
	if opts.ModuleDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if opts.ModuleDir, err = nodeimage.FindModuleDir(wd); err != nil {
			return nil, err
		}
	}
	probe, err := nodeimage.BuildProbeImage(ctx, opts, filepath.Dir(filepath.Dir(opts.ModuleDir)))
	if err != nil {
		return nil, err
	}
	opts.Preload = append(opts.Preload, probe)
	res, err := nodeimage.Build(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Images{ProbeImage: probe, Result: res}, nil
}
