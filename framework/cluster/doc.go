// Package cluster runs cases on any Kubernetes cluster reached through a kubeconfig: the
// machinery of the `cluster` target (framework/targets/cluster registers it) and of the kind
// target, which runs it on the clusters it creates.
// The target is a framework pair (apiserver.go, kubelet.go). The real apiserver admits each
// case once (a server-side dry-run create: validation errors, dropped fields read back from the
// pod it would store); the real kubelet sets up the admitted volumes
// (Secrets and ConfigMaps created from Case.Sources) in pods whose probe container (the probe image, run as root) snapshots them and runs the
// case's probes each as its user. hostPath set-up failures are read from the kubelet's
// FailedMount events. The flexVolume allowlist (seed 004) is manifests/flexvolume-vap.yaml,
// installed on demand and bound once per allowlist. Many cases share one pod.
//
// Its files, by job: cluster.go (the target: its options, New, Prepare and Observe, Close);
// discover.go (the node it runs on, the gates the apiserver and the kubelet report in their
// metrics); runnable.go (what a cluster can run: its releases, its gates, what a stock node
// cannot have, not applicable); apiserver.go (the apiserver half: each case admitted once, by a dry-run
// create in a namespace of the half's own, on the apiserver of the case's gates, endpoint.go;
// the fields the apiserver dropped, by comparison: execproto.DroppedFields) and kubelet.go (the
// kubelet half, a framework.BatchNode: what the node can set up, the admitted cases observed in
// batches); batch.go (a node batch from namespace to answers); plan.go (the pure pod-packing
// plan, packPods and podGroup); sources.go; fixtures.go (hostPath fixtures, the flexVolume
// driver); pods.go (create, wait, FailedMount events); hostpath.go (a pod of hostPath cases that
// did not run, split); observe.go, exec.go (snapshot and probes in the probe container);
// namespaces.go, warnings.go, retry.go, podfate.go, policy.go, cleanup.go, sweep.go; nodes.go
// (the nodes a run may use and their pools); spread.go (the target over several nodes: a pool's
// cases split over its nodes, every pool asked, disagreements failed); runtime.go (what a node's
// runtime reports it can do).
// Node control, which only a cluster volperm controls (kind) reaches, is framework/nodecontrol
// (the Control interface, cells, timelines, the actions of each move and the Driver that
// executes them); this package runs the pods around it (nodecontrol.go: what it takes from it,
// and nodeView, the Driver's reads of the cluster): reconfigure.go (which cases run in which
// cell and timeline, the cells nearest first), timeline.go (a history's pods created at their
// points, its kubelet steps as rounds), steps.go (a case's steps through framework/lifecycle),
// stepgroups.go (pods whose steps share their restarts), settle.go (the kubelet's pods and
// mounted volumes, which the Driver waits for after a restart).
package cluster
