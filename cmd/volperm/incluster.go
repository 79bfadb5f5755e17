package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/incluster"
	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/manifests"
)

// clusterFlags are the flags that select a cluster, as the cluster target's.
type clusterFlags struct{ kubeconfig, context string }

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context")
}

func (c *clusterFlags) options() (incluster.Options, error) {
	cfg, client, err := cluster.Client(c.kubeconfig, c.context)
	if err != nil {
		return incluster.Options{}, err
	}
	return incluster.Options{Config: cfg, Client: client, Log: os.Stderr}, nil
}

// runnerImage is the runner image: ref when given, else built here (framework/probe/image
// WithRunner) and, with kindCluster, loaded into that kind cluster's nodes.
func runnerImage(ctx context.Context, s streams, ref, kindCluster string) (string, error) {
	if ref == "" {
		var err error
		if ref, err = buildImage(ctx, s, "", true); err != nil {
			return "", fmt.Errorf("build the runner image: %w (or pass --image)", err)
		}
	}
	if kindCluster != "" {
		if err := kind.LoadImage(ctx, kindCluster, ref, s.err); err != nil {
			return "", err
		}
	}
	return ref, nil
}

// runInCluster is `volperm cluster run --in-cluster`: start volperm as a Job in the cluster
// (framework/incluster) and return; `volperm cluster retrieve` fetches the reports.
func runInCluster(s streams, args []string) int {
	fs := flag.NewFlagSet("cluster run", flag.ContinueOnError)
	var c clusterFlags
	c.register(fs)
	inCluster := fs.Bool("in-cluster", false, "run volperm itself in the cluster, as a Job (required: `volperm run --target cluster` runs from here)")
	image := fs.String("image", "", "the runner image, on every node already (default: built here, volperm/volperm:<hash>; load it with --kind-cluster, or `volperm image save --runner` and ctr import)")
	kindCluster := fs.String("kind-cluster", "", "load the runner image into the nodes of this kind cluster first")
	focus := fs.String("focus", "", "E2E_FOCUS of the run (a regular expression on the spec names; \\[Conformance\\] selects the conformance profile)")
	skip := fs.String("skip", "", "E2E_SKIP of the run")
	profile := fs.String("profile", "", "profiles to run, comma-separated; default all")
	labelFilter := fs.String("label-filter", "", `Ginkgo label filter of the run, e.g. "!runtime-defined"`)
	nodes := fs.String("nodes", "", "label selector of the nodes the run's cases run on (the cluster target's --nodes; default every Ready, schedulable Linux node)")
	claim := fs.String("claim", "", "features the implementation claims (conformance-report.yaml)")
	accept := fs.Bool("accept-known-differences", false, "exit 0 when every failure is a documented known difference of the target")
	hold := fs.Duration("hold", incluster.DefaultHold, "how long the run's pod keeps its results for retrieve after the run")
	direct := fs.Bool("direct-apiserver", false, "the run reaches the apiserver at the kubernetes Service's endpoint, not its cluster IP: for clusters without kube-proxy (on with --kind-cluster: volperm's kind clusters have none)")
	if code, done := parseSubcommand(s, "cluster run", "start volperm in the cluster as a Job and return: volperm cluster retrieve fetches the reports", fs, args); done {
		return code
	}
	if !*inCluster {
		return fail(s, "cluster run", usagef("only --in-cluster runs are started this way: volperm run --target cluster runs from this machine"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o, err := c.options()
	if err != nil {
		return fail(s, "cluster run", usagef("%v", err))
	}
	if o.Image, err = runnerImage(ctx, s, *image, *kindCluster); err != nil {
		return fail(s, "cluster run", err)
	}
	o.Hold = *hold
	if *direct || *kindCluster != "" {
		if o.APIServer, err = incluster.APIServerEndpoint(ctx, o.Client); err != nil {
			return fail(s, "cluster run", err)
		}
	}
	if *profile != "" {
		o.Args = append(o.Args, "--profile", *profile)
	}
	if *labelFilter != "" {
		o.Args = append(o.Args, "--label-filter", *labelFilter)
	}
	if *nodes != "" {
		o.Args = append(o.Args, "--"+cluster.FlagNodes, *nodes)
	}
	if *claim != "" {
		o.Args = append(o.Args, "--claim", *claim)
	}
	if *accept {
		o.Args = append(o.Args, "--accept-known-differences")
	}
	o.Env = map[string]string{}
	if *focus != "" {
		o.Env["E2E_FOCUS"] = *focus
	}
	if *skip != "" {
		o.Env["E2E_SKIP"] = *skip
	}
	if err := incluster.Start(ctx, o); err != nil {
		return fail(s, "cluster run", err)
	}
	fmt.Fprintf(s.out, "started job %s/%s (image %s); fetch its reports with: volperm cluster retrieve --report-dir DIR\n", incluster.Namespace, incluster.JobName, o.Image)
	return exitOK
}

// runRetrieve is `volperm cluster retrieve`: wait for the in-cluster run, copy its reports into
// --report-dir, remove the run; exit 0 when the run passed, 1 when not.
func runRetrieve(s streams, args []string) int {
	fs := flag.NewFlagSet("cluster retrieve", flag.ContinueOnError)
	var c clusterFlags
	c.register(fs)
	dir := fs.String("report-dir", "reports", "where the run's reports go")
	wait := fs.Duration("wait", 2*time.Hour, "how long to wait for the run to finish (it stays in the cluster after that)")
	if code, done := parseSubcommand(s, "cluster retrieve", "wait for the in-cluster run, fetch its reports and remove it", fs, args); done {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o, err := c.options()
	if err != nil {
		return fail(s, "cluster retrieve", usagef("%v", err))
	}
	res, err := incluster.Retrieve(ctx, o, *dir, *wait)
	if err != nil {
		return fail(s, "cluster retrieve", err)
	}
	verdict := "PASSED"
	if !res.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(s.out, "in-cluster run %s: %d files in %s (%s)\n", verdict, len(res.Files), *dir, strings.Join(res.Files, ", "))
	if summary, err := os.ReadFile(filepath.Join(*dir, "summary.md")); err == nil {
		head, _, _ := strings.Cut(string(summary), "## Failures")
		fmt.Fprint(s.out, head)
	}
	if !res.Passed {
		return exitFailed
	}
	return exitOK
}

// runRemove is `volperm cluster remove`: delete an in-cluster run without fetching it.
func runRemove(s streams, args []string) int {
	fs := flag.NewFlagSet("cluster remove", flag.ContinueOnError)
	var c clusterFlags
	c.register(fs)
	if code, done := parseSubcommand(s, "cluster remove", "delete the in-cluster run (its Job, namespace and RBAC) without fetching its results", fs, args); done {
		return code
	}
	o, err := c.options()
	if err != nil {
		return fail(s, "cluster remove", usagef("%v", err))
	}
	if err := incluster.Remove(context.Background(), o); err != nil {
		return fail(s, "cluster remove", err)
	}
	fmt.Fprintf(s.out, "removed the in-cluster run (namespace %s)\n", incluster.Namespace)
	return exitOK
}

// runSonobuoyPlugin is `volperm cluster sonobuoy-plugin`: manifests/sonobuoy-plugin.yaml with
// the runner image named.
func runSonobuoyPlugin(s streams, args []string) int {
	fs := flag.NewFlagSet("cluster sonobuoy-plugin", flag.ContinueOnError)
	image := fs.String("image", "", "the runner image (default: built here)")
	kindCluster := fs.String("kind-cluster", "", "load the runner image into the nodes of this kind cluster")
	if code, done := parseSubcommand(s, "cluster sonobuoy-plugin", "print volperm's Sonobuoy plugin with its runner image (sonobuoy run --plugin FILE)", fs, args); done {
		return code
	}
	ref, err := runnerImage(context.Background(), s, *image, *kindCluster)
	if err != nil {
		return fail(s, "cluster sonobuoy-plugin", err)
	}
	fmt.Fprint(s.out, strings.ReplaceAll(string(manifests.SonobuoyPlugin), "RUNNER_IMAGE", ref))
	return exitOK
}
