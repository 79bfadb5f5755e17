package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

// clusterUsage names the subcommands of `volperm cluster`.
const clusterUsage = "want a subcommand: volperm cluster image [--kubernetes-version v1.N.P] [--runtime containerd2|debian] | run --in-cluster | retrieve | remove | sonobuoy-plugin"

// runCluster is `volperm cluster SUBCOMMAND`.
func runCluster(s streams, args []string) int {
	if len(args) == 0 {
		return fail(s, "cluster", usagef(clusterUsage))
	}
	switch args[0] {
	case "image":
		return runClusterImage(s, args[1:])
	case "run":
		return runInCluster(s, args[1:])
	case "retrieve":
		return runRetrieve(s, args[1:])
	case "remove":
		return runRemove(s, args[1:])
	case "sonobuoy-plugin":
		return runSonobuoyPlugin(s, args[1:])
	}
	return fail(s, "cluster", usagef("unknown subcommand %q: %s", args[0], clusterUsage))
}

// runClusterImage is `volperm cluster image`: build (or find in the cache) the probe image and
// the kind node image of a Kubernetes release (default nodeimage.KubernetesVersion) that
// preloads it, offline, and print both tags and the step timings as JSON. Progress goes to
// stderr, one line per step.
func runClusterImage(s streams, args []string) int {
	fs := flag.NewFlagSet("cluster image", flag.ContinueOnError)
	var opts nodeimage.Options
	fs.StringVar(&opts.CacheDir, "cache", "", "artifact cache (default $XDG_CACHE_HOME/volperm/kindnode or ~/.cache/volperm/kindnode)")
	fs.StringVar(&opts.Mirror, "mirror", "", "Debian mirror for debootstrap (default http://deb.debian.org/debian)")
	fs.StringVar(&opts.Release, "kubernetes-version", "", "the Kubernetes release of the node image, v1.N.P of a supported minor (default "+nodeimage.KubernetesVersion+"), cached per release")
	fs.StringVar(&opts.Runtime, "runtime", "", "the container runtime of the node image: "+strings.Join(nodeimage.Runtimes, " or ")+" (default "+nodeimage.DefaultRuntime+"), cached per runtime")
	if code, done := parseSubcommand(s, "cluster image", "build (or find in the cache) the kind node image and the probe image", fs, args); done {
		return code
	}
	opts.Log = s.err
	if opts.Release != "" {
		if err := k8srelease.CheckRelease(opts.Release); err != nil {
			return fail(s, "cluster image", usagef("--kubernetes-version: %v", err))
		}
	}
	if err := nodeimage.CheckRuntime(opts.Runtime); err != nil {
		return fail(s, "cluster image", usagef("--runtime: %v", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	images, err := kind.BuildImages(ctx, opts)
	if err != nil {
		return fail(s, "cluster image", err)
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(images); err != nil {
		return fail(s, "cluster image", err)
	}
	return exitOK
}

// runImage is `volperm image save -o FILE`: build (or find in the cache) the cluster target's
// probe image and write it as a `docker save` tarball, for clusters that pull from no registry
// this machine can reach: load it on each node (`ctr -n k8s.io images import FILE`) or push it
// to the cluster's own mirror, then pass its reference to --probe-image.
func runImage(s streams, args []string) int {
	if len(args) == 0 || args[0] != "save" {
		return fail(s, "image", usagef("want a subcommand: volperm image save -o FILE"))
	}
	fs := flag.NewFlagSet("image save", flag.ContinueOnError)
	out := fs.String("o", "", "the tarball to write (required)")
	runner := fs.Bool("runner", false, "the runner image (volperm and the probe: an in-cluster run, Sonobuoy, hydrophone) instead of the probe image")
	cache := fs.String("cache", "", "artifact cache (default $XDG_CACHE_HOME/volperm/kindnode or ~/.cache/volperm/kindnode)")
	if code, done := parseSubcommand(s, "image save", "write the probe image as a tarball, for clusters without a registry this machine reaches", fs, args[1:]); done {
		return code
	}
	if *out == "" {
		return fail(s, "image save", usagef("-o FILE is required: where to write the probe image tarball"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	tag, err := buildImage(ctx, s, *cache, *runner)
	if err != nil {
		return fail(s, "image save", err)
	}
	// Written beside the target and renamed, so that a failed save leaves no partial tarball.
	tmp := *out + ".partial"
	cmd := exec.CommandContext(ctx, "docker", "save", "-o", tmp, tag)
	cmd.Stderr = s.err
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fail(s, "image save", fmt.Errorf("docker save %s: %w", tag, err))
	}
	if err := os.Rename(tmp, *out); err != nil {
		os.Remove(tmp)
		return fail(s, "image save", err)
	}
	fmt.Fprintf(s.out, "%s\t%s\n", tag, *out)
	return exitOK
}

// buildImage builds (or finds in the Docker engine) the probe image, or with runner the runner
// image, of the volperm checkout holding the working directory; cache is nodeimage's.
func buildImage(ctx context.Context, s streams, cache string, runner bool) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	opts := nodeimage.Options{CacheDir: cache, Log: s.err}
	if opts.ModuleDir, err = nodeimage.FindModuleDir(wd); err != nil {
		return "", err
	}
	build := nodeimage.BuildProbeImage
	if runner {
		build = nodeimage.BuildRunnerImage
	}
	return build(ctx, opts, filepath.Dir(filepath.Dir(opts.ModuleDir)))
}
