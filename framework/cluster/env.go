package cluster

import "github.com/volperm/volperm/framework"

// The target's flags (volperm run, observe, diff).
const (
	FlagKubeconfig = "kubeconfig"
	FlagContext    = "context"
	FlagProbeImage = "probe-image"
	FlagParallel   = "parallel"
	FlagNodes      = "nodes"
	FlagEveryNode  = "every-node"
	// FlagNamespaceLabels labels the run's namespaces (the Kubernetes e2e framework's adapter
	// gives them its e2e-run and e2e-framework labels, e2e/volperme2e.go).
	FlagNamespaceLabels = "namespace-labels"
)

func init() {
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagKubeconfig, Owner: Name, Usage: "kubeconfig of the cluster (default $KUBECONFIG, ~/.kube/config)"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagContext, Owner: Name, Usage: "kubeconfig context"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagProbeImage, Owner: Name + ", kind", Usage: "probe image the cluster's pods run; it must be on the nodes (volperm image save); kind builds one when empty"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagParallel, Owner: Name, Usage: "probe pods started at once (default 8); 1 runs them one after another"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagNodes, Owner: Name, Usage: "label selector of the nodes to run on (default every Ready, schedulable Linux node); nodes of one kubelet release, OS image and runtime form a pool, each case runs on one node of every pool"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagEveryNode, Owner: Name, Bool: true, Usage: "run each case on every node, not on one node of every pool"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagNamespaceLabels, Owner: Name, Usage: "labels of the namespaces the run creates, KEY=VALUE,... (as a cluster's policies or cleanup tools want them)"})
	framework.RegisterEnv(
		framework.EnvVar{Name: EnvPodStartTimeout, Owner: Name + ", kind", Meaning: "how long a probe, fixture or driver pod may take to start, a Go duration (default " + defaultPodStart.String() + "); its cases then fail naming the pod's and its node's state"},
		framework.EnvVar{Name: EnvAPIServerTimeout, Owner: Name + ", kind", Meaning: "how long the apiserver may not answer before the cases waiting for it fail, a Go duration (default " + defaultAPIServer.String() + "); calls are retried with backoff until then"},
	)
}
