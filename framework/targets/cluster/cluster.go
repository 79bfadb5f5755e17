// Package cluster registers the `cluster` target: any existing Kubernetes cluster reached
// through a kubeconfig, run by framework/cluster.
package cluster

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"

	"k8s.io/client-go/kubernetes"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
)

func init() {
	framework.RegisterTarget(cluster.Name, "any existing cluster by kubeconfig (--kubeconfig, --context, --probe-image): pods on its real apiserver and kubelet, through client-go; cluster:flex-driver installs the harness's flexVolume driver on the node for the flexVolume set-up cases", func(o framework.TargetOptions) (framework.Target, error) {
		timeouts, err := cluster.TimeoutsFromEnv()
		if err != nil {
			return nil, fmt.Errorf("cluster target: %w", err)
		}
		opts := cluster.Options{Kubeconfig: o.Flag(cluster.FlagKubeconfig), Context: o.Flag(cluster.FlagContext), ProbeImage: o.Flag(cluster.FlagProbeImage), Log: os.Stderr, Timeouts: timeouts}
		if v := o.Flag(cluster.FlagParallel); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("cluster target: --%s %q: want a number of pods, at least 1", cluster.FlagParallel, v)
			}
			opts.Parallel = n
		}
		if opts.NamespaceLabels, err = cluster.ParseLabels(o.Flag(cluster.FlagNamespaceLabels)); err != nil {
			return nil, fmt.Errorf("cluster target: %w", err)
		}
		switch o.Arg {
		case "":
		case "flex-driver":
			opts.InstallFlexDriver = true
		default:
			return nil, fmt.Errorf("cluster target: unknown option %q: write cluster or cluster:flex-driver", o.Arg)
		}
		// Every node (docs/certify.md "Every node"): one node's target when the nodes make one
		// pool of one node, else the target spread over them.
		ctx := context.Background()
		_, client, err := cluster.Client(opts.Kubeconfig, opts.Context)
		if err != nil {
			return nil, fmt.Errorf("cluster target: %w", err)
		}
		nodes, leftOut, err := cluster.ListNodesLeftOut(ctx, client, o.Flag(cluster.FlagNodes))
		if err != nil {
			return nil, fmt.Errorf("cluster target: %w", err)
		}
		opts.NodesLeftOut = leftOut
		if len(nodes) == 1 {
			opts.Node = nodes[0].Name
			return cluster.New(ctx, opts)
		}
		return spread(ctx, opts, client, cluster.Pools(nodes, o.Flag(cluster.FlagEveryNode) == "true"))
	})
}

// spread is the target over pools: one cluster.Spread when their kubelets are of one release;
// else a release matrix (framework.Matrix: the cells kube-apiserver x each kubelet release, as
// kind@matrix), each cell the Spread over the pools of that kubelet release, so that every case
// runs as the cell of the nodes it runs on.
func spread(ctx context.Context, opts cluster.Options, client kubernetes.Interface, pools [][]cluster.NodeInfo) (framework.Target, error) {
	byKubelet := map[string][][]cluster.NodeInfo{}
	for _, p := range pools {
		k := framework.MinorRelease(p[0].Kubelet)
		byKubelet[k] = append(byKubelet[k], p)
	}
	if len(byKubelet) == 1 {
		return cluster.NewSpread(ctx, opts, pools)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cluster target: server version: %w", err)
	}
	api := framework.MinorRelease(v.GitVersion)
	kubelets := slices.Collect(maps.Keys(byKubelet))
	slices.SortFunc(kubelets, func(a, b string) int { return framework.ReleaseMinor(b) - framework.ReleaseMinor(a) })
	var (
		cells   []framework.Releases
		closers []io.Closer
	)
	by := map[framework.Releases]framework.Target{}
	for _, k := range kubelets {
		s, err := cluster.NewSpread(ctx, opts, byKubelet[k])
		if err != nil {
			for _, c := range closers {
				c.Close()
			}
			return nil, fmt.Errorf("cluster target: kubelet %s: %w", k, err)
		}
		r := framework.Releases{APIServer: api, Kubelet: k}
		cells = append(cells, r)
		by[r] = s
		closers = append(closers, s)
	}
	m := framework.NewMatrix(cluster.Name, cells, by, closers).InParallel()
	if opts.NodesLeftOut != "" {
		// Each cell's Spread names its own nodes; the nodes no cell runs on are the matrix's.
		m.WithDetails(map[string]string{"nodesLeftOut": opts.NodesLeftOut})
	}
	return m, nil
}
