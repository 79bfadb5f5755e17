package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/knowndiff"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/framework/nodecontrol"
	"github.com/volperm/volperm/framework/owner"
)

// Name is the target's registry name.
const Name = "cluster"

// Options configure the target.
type Options struct {
	// Kubeconfig and Context select the cluster ("" = client-go's defaults: $KUBECONFIG, ~/.kube/config).
	Kubeconfig string
	Context    string
	// ProbeImage holds /volperm-probe (cmd/volperm-probe); it must already be on the node
	// (pods use imagePullPolicy Never).
	ProbeImage string
	// Node pins every pod to this node ("" = the first Ready node).
	Node string
	// BatchVolumes is the most volumes one probe pod mounts (0 = defaultBatchVolumes).
	BatchVolumes int
	// Parallel is how many probe pods of a batch are started at once (0 = 8).
	Parallel int
	// NodeControl, when set, lets cases flip kubelet gates and restart the kubelet (Case.After).
	NodeControl NodeControl
	// Reconfigure (needs NodeControl) changes the cluster's gates in place to the ones each
	// group of cases needs, and runs gate steps (Case.After) on the apiserver too: see
	// reconfigure.go. Without it, a case runs only on the gates the cluster has.
	Reconfigure bool
	// PodPerCase gives every case a probe pod of its own (to measure what batching saves).
	PodPerCase bool
	// InstallFlexDriver installs the harness's flexVolume driver (fixturedriver) in the node's
	// kubelet plugin dir, FlexPluginDir, before the first case that sets one up.
	InstallFlexDriver bool
	// FlexPluginDir is the kubelet's volumePluginDir ("" = the kubelet's default,
	// /usr/libexec/kubernetes/kubelet-plugins/volume/exec).
	FlexPluginDir string
	// Timeouts bound the pod starts and the apiserver's outages (zero: defaults, retry.go).
	Timeouts Timeouts
	// Ephemeral says that the cluster is deleted with the run (kind): a run killed before its
	// cleanup leaves nothing on it that matters, so it records nothing for `volperm cleanup`.
	Ephemeral bool
	// NodesLeftOut says which of the cluster's nodes the run does not use and why
	// (ListNodesLeftOut), for the target's details.
	NodesLeftOut string
	// NamespaceLabels are added to the labels of the namespaces the run creates (its own
	// ownership labels win).
	NamespaceLabels map[string]string
	// Log receives progress lines (nil = discarded).
	Log io.Writer
}

// ParseLabels reads KEY=VALUE,... (the --namespace-labels flag) into a map; each key and value
// must be a valid label key and value.
func ParseLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	set, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		return nil, fmt.Errorf("--%s %q: %v: write KEY=VALUE,KEY=VALUE", FlagNamespaceLabels, s, err)
	}
	for k, v := range set {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--%s: label key %q: %s", FlagNamespaceLabels, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--%s: label %s=%q: %s", FlagNamespaceLabels, k, v, strings.Join(errs, "; "))
		}
	}
	return set, nil
}

// Target runs cases on a cluster.
type Target struct {
	opts   Options
	config *rest.Config
	client kubernetes.Interface
	// admitClient is client sending JSON (newTarget), for admission.
	admitClient kubernetes.Interface
	meta        metadata.Interface
	disco       *discovery.DiscoveryClient
	// endpoint is the apiserver the clients talk to (endpoint.go).
	endpoint *endpoint
	node     string
	version  string
	// kubeletVersion is what the node's kubelet reports (Node.status.nodeInfo.kubeletVersion).
	kubeletVersion string
	// runtime is what the node's runtime has of each capability of needs.Capabilities, by
	// name, as its status says (runtime.go: detectors).
	runtime map[string]bool
	// ranges are the user namespaces of this target's running probe pods (userns.go).
	ranges liveRanges
	// now is what runs on the node: the feature gates the cluster's components report
	// (kubernetes_feature_enabled) and the kubelet's release ("v1.N"), its own
	// (kubeletVersion's) but during a history that replaces the kubelet. ctl (nil without
	// Options.NodeControl) keeps it up to date as it changes the node (nodecontrol.go).
	now nodecontrol.State
	ctl *nodecontrol.Driver
	// pair is the target's case path: the apiserver half (apiserver.go: admission) and the
	// kubelet half (kubelet.go: the node, in batches), a framework.Batcher with the one
	// prepared-results cache.
	pair framework.Target
	api  *apiserverHalf

	mu        sync.Mutex
	podStarts int
	// flexInstalled is set once the fixture driver is on the node.
	flexInstalled bool
	hooks         Hooks
	// diskPods are the disk-view pods of the batch namespaces (userns.go).
	diskPods map[string]string
	// trackers follow the pods of each batch namespace (podfate.go).
	trackers map[string]*podTracker
	// namespaces are the batch namespaces this target created and has not seen gone (Cleanup).
	namespaces map[string]bool
	// bindings are policy bindings whose delete failed (Cleanup deletes them).
	bindings map[string]bool
	// record is the directory of this run's record of the cluster (cleanup.go), "" when none.
	record string
	// downSince is when the current apiserver outage began (zero: none); outages are the
	// lengths of the outages that ended.
	downSince time.Time
	outages   []time.Duration
	// ready says whether the apiserver is ready (readyz; a stub in tests).
	ready func(context.Context) bool
}

// Hooks are called at precise moments of a batch, for tests that inject faults (a nil field is
// not called). They run on the goroutine of the pod concerned and block it until they return.
type Hooks struct {
	// PodCreated is called once a probe pod has been created, before the target waits for it
	// to run.
	PodCreated func(ctx context.Context, namespace, pod string)
	// PodRunning is called once a probe pod runs, before the target observes it (its exec).
	PodRunning func(ctx context.Context, namespace, pod string)
}

// SetHooks installs hooks for the batches that start afterwards.
func (t *Target) SetHooks(h Hooks) {
	t.mu.Lock()
	t.hooks = h
	t.mu.Unlock()
}

func (t *Target) hook() Hooks {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hooks
}

// Client is the target's client of the cluster (for tests that inject faults).
func (t *Target) Client() kubernetes.Interface { return t.client }

// New connects to the cluster, picks the node and reads both components' feature gates.
func New(ctx context.Context, opts Options) (*Target, error) {
	if opts.ProbeImage == "" {
		return nil, errors.New("cluster target: no probe image (--probe-image)")
	}
	if opts.Reconfigure && opts.NodeControl == nil {
		return nil, errors.New("cluster target: reconfiguring gates in place needs control of the node")
	}
	if opts.FlexPluginDir == "" {
		opts.FlexPluginDir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec"
	}
	if opts.BatchVolumes == 0 {
		opts.BatchVolumes = defaultBatchVolumes
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	cfg, rules, loader, err := loadConfig(opts.Kubeconfig, opts.Context)
	if err != nil {
		return nil, fmt.Errorf("cluster target: kubeconfig: %w", err)
	}
	t, err := newTarget(opts, cfg)
	if err != nil {
		return nil, err
	}
	// One attempt: a cluster that does not answer at the start is more likely misconfigured
	// than restarting.
	vctx, cancel := context.WithTimeout(ctx, callTimeout)
	raw, err := t.client.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(vctx)
	cancel()
	var v version.Info
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster target: server version: %w", err)
	}
	t.version = v.GitVersion
	t.sweep(ctx)
	if t.node, err = t.pickNode(ctx); err != nil {
		return nil, err
	}
	var node *corev1.Node
	err = t.call(ctx, func(ctx context.Context) (err error) {
		node, err = t.client.CoreV1().Nodes().Get(ctx, t.node, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster target: node %s: %w", t.node, err)
	}
	t.kubeletVersion = node.Status.NodeInfo.KubeletVersion
	t.now.Release = framework.MinorRelease(t.kubeletVersion)
	t.runtime = runtimeOf(node)
	if t.now.Gates.APIServer, err = t.featureGates(ctx, "/metrics"); err != nil {
		return nil, fmt.Errorf("cluster target: apiserver feature gates: %w", err)
	}
	err = retryKubeletAuthz(ctx, kubeletAuthzGrace, func() (err error) {
		t.now.Gates.Kubelet, err = t.featureGates(ctx, "/api/v1/nodes/"+t.node+"/proxy/metrics")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster target: kubelet feature gates of node %s: %w", t.node, err)
	}
	if opts.NodeControl != nil {
		t.ctl = nodecontrol.NewDriver(opts.NodeControl, nodeView{t}, t.node, &t.now, nodecontrol.Waits{}, t.logf)
	}
	if !opts.Ephemeral {
		rec := Record{Owner: owner.Self(), Kubeconfig: rules.GetLoadingPrecedence(), Context: opts.Context, Server: cfg.Host}
		if rec.Context == "" {
			if raw, err := loader.RawConfig(); err == nil {
				rec.Context = raw.CurrentContext
			}
		}
		if t.record, err = writeRecord(rec); err != nil {
			t.logf("%v (if this run is killed, its namespaces are left to the next run on this cluster)", err)
		}
	}
	return t, nil
}

// defaultBatchVolumes is the most volumes a probe pod mounts. A pod's start costs the node
// more than a volume of it: the kind target's emptyDir area (2117 cases), measured twice each on
// this machine, in 40 pods of 64 volumes took 51-53 s and 90 node core-seconds, in 16 of 256
// 40-42 s and 68-70, every verdict the same (issue 34). Cases with API objects (secrets,
// configMaps: a watch each in the kubelet) mostly get pods of their own anyway.
const defaultBatchVolumes = 256

// admitQPS bounds the admission client's requests a second (the other clients': 50).
const admitQPS = 200

// newTarget makes a Target on cfg, without talking to the cluster.
func newTarget(opts Options, cfg *rest.Config) (*Target, error) {
	if opts.Parallel == 0 {
		opts.Parallel = 8
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.WarningHandlerWithContext = warningHandler{} // admission's warnings (warnings.go)
	ep := &endpoint{}
	ep.wrap(cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster target: %w", err)
	}
	// Admission sends the case's object as JSON, as kubectl and a manifest do: client-go's
	// generated clients send built-in types as protobuf, whose fields an apiserver of an older
	// release does not know it ignores without a warning or a strict refusal (docs/releases.md
	// "Node images of other releases").
	// Dry-runs store nothing and are sent several at a time (framework batchpair.go admitWorkers): at
	// the other clients' 50 a second, the kind catalogue's 2900 admissions alone took a minute
	// (issue 34).
	jsonCfg := rest.CopyConfig(cfg)
	jsonCfg.ContentType = runtime.ContentTypeJSON
	jsonCfg.QPS, jsonCfg.Burst = admitQPS, admitQPS
	admitClient, err := kubernetes.NewForConfig(jsonCfg)
	if err != nil {
		return nil, fmt.Errorf("cluster target: %w", err)
	}
	// Cleanup lists every namespaced resource through it: not the deprecation warning of each.
	quiet := rest.CopyConfig(cfg)
	quiet.WarningHandler, quiet.WarningHandlerWithContext = rest.NoWarnings{}, nil
	meta, err := metadata.NewForConfig(quiet)
	if err != nil {
		return nil, fmt.Errorf("cluster target: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster target: %w", err)
	}
	t := &Target{opts: opts, config: cfg, client: cs, admitClient: admitClient, meta: meta, disco: disco, endpoint: ep,
		namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
	t.ready = t.readyz
	t.api = &apiserverHalf{t: t}
	t.pair = framework.NewTargetPair(Name, t.api, kubeletHalf{t})
	return t, nil
}

// Info names the target, the server version, the node and the gates it found.
func (t *Target) Info() framework.TargetInfo {
	d := map[string]string{"node": t.node, "probeImage": t.opts.ProbeImage, "kubelet": t.kubeletVersion}
	// What the node claims (its status) decides which cases run: a claim is checked by the
	// cases it lets in (docs/certify.md "What a node claims").
	for _, c := range needs.Capabilities {
		switch {
		case t.runtime[c.Name]:
			d["runtime."+c.Name] = fmt.Sprintf("claimed (%s): the %s cases run and check it", c.Reports, c.Has)
		case c.Without != "":
			d["runtime."+c.Name] = fmt.Sprintf("not claimed (%s): the %s cases run and check the kubelet's answer", c.Reports, c.Without)
		default:
			d["runtime."+c.Name] = fmt.Sprintf("not claimed (%s): its cases are not this node's", c.Reports)
		}
	}
	if t.opts.NodesLeftOut != "" {
		d["nodesLeftOut"] = t.opts.NodesLeftOut
	}
	for _, g := range sortedKeys(framework.KnownGates) {
		d["apiserver."+g] = framework.GateWord(t.now.Gates.APIServer, g)
		d["kubelet."+g] = framework.GateWord(t.now.Gates.Kubelet, g)
	}
	return framework.TargetInfo{Name: Name, Version: t.version, Details: d}
}

// SetPodPerCase switches between batching (many cases a pod) and one pod per case, for the
// batches that start afterwards.
func (t *Target) SetPodPerCase(on bool) {
	t.mu.Lock()
	t.opts.PodPerCase = on
	t.mu.Unlock()
}

// Versions are the releases the apiserver and the node's kubelet report (v1.N.P).
func (t *Target) Versions() (apiserver, kubelet string) { return t.version, t.kubeletVersion }

// Node is the name of the node the target's probe pods run on.
func (t *Target) Node() string { return t.node }

// Gates are the gates the cluster's apiserver and kubelet report.
func (t *Target) Gates() framework.Gates { return t.now.Gates }

// Prepare admits each case once and observes those that reach the node in one batch
// (framework.Batcher); Observe then returns each one's result.
func (t *Target) Prepare(ctx context.Context, cases []*framework.Case) error {
	// A case that is not the cluster's (NotApplicable) never joins a probe pod: a runtime-
	// defined hostPath in a pod fails the pod's container for every case it holds.
	applicable := slices.DeleteFunc(slices.Clone(cases), func(c *framework.Case) bool { return t.NotApplicable(c) != "" })
	return t.pair.(framework.Batcher).Prepare(ctx, applicable)
}

// BatchesRun: a cluster prepares the whole run at once (framework.RunBatcher): every area's
// cases share the node's gate cells, probe pods and kubelet restarts.
func (t *Target) BatchesRun() bool { return true }

// Observe returns what Prepare observed for c, or runs c alone (a batch of one).
func (t *Target) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	return t.pair.Observe(ctx, c)
}

// admitOn makes the target admit its cases through other's apiserver half (the nodes of a
// Spread: one apiserver writes every node's pods, so each case is admitted once). Before any
// case.
func (t *Target) admitOn(other *Target) {
	t.api = other.api
	t.pair = framework.NewTargetPair(Name, t.api, kubeletHalf{t})
}

// ObserveBatch observes cases together (Prepare) and hands out each one's result, in the order
// of cases.
func (t *Target) ObserveBatch(ctx context.Context, cases []*framework.Case) []Result {
	return ObserveEach(ctx, t, cases)
}

// ObserveEach has t Prepare cases and hands out each one's result, in the order of cases (for
// callers that drive a cluster or kind target themselves); a case t does not run is an error
// that says why.
func ObserveEach(ctx context.Context, t interface {
	framework.Target
	framework.Batcher
}, cases []*framework.Case) []Result {
	_ = t.Prepare(ctx, cases) // its error is ctx's, which each Observe below meets
	out := make([]Result, len(cases))
	for i, c := range cases {
		if ok, why := t.Supports(c); !ok {
			out[i].Err = fmt.Errorf("case not supported by the %s target: %s", t.Info().Name, why)
			continue
		}
		out[i].Observation, out[i].Err = t.Observe(ctx, c)
	}
	return out
}

// Close removes what the run left on the cluster (the admission half's namespace and bindings,
// then Cleanup: the batch namespaces still there, also stuck ones) and then the run's record of
// the cluster.
func (t *Target) Close() error {
	err := errors.Join(t.pair.Close(), t.Cleanup(context.Background()))
	if err == nil {
		t.removeRecord()
	}
	return err
}

// Result is the outcome of one case of a batch.
type Result struct {
	Observation *framework.Observation
	// Err is a failure of the target (not of the case).
	Err error
}

// logf writes one progress line to Options.Log.
func (t *Target) logf(format string, a ...any) {
	fmt.Fprintf(t.opts.Log, "cluster: "+format+"\n", a...)
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// admissionErrors turns an apiserver rejection into field.Error texts: for Invalid, one per
// cause ("FIELD: MESSAGE", what field.Error.Error() prints); otherwise the status message.
func admissionErrors(err error) []string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return []string{err.Error()}
	}
	st := se.Status()
	if st.Details != nil && len(st.Details.Causes) > 0 && st.Reason == metav1.StatusReasonInvalid {
		var out []string
		for _, c := range st.Details.Causes {
			if c.Field != "" {
				out = append(out, c.Field+": "+c.Message)
			} else {
				out = append(out, c.Message)
			}
		}
		return out
	}
	return []string{st.Message}
}

// waitFor polls cond every interval until it is true, fails, or timeout passes (then a
// *notWithinError).
func waitFor(ctx context.Context, timeout, interval time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return &notWithinError{what: what, timeout: timeout}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// loadConfig is the client configuration of kubeconfig and context ("": client-go's defaults:
// $KUBECONFIG, ~/.kube/config, and in a pod the in-cluster configuration).
func loadConfig(kubeconfig, context string) (*rest.Config, *clientcmd.ClientConfigLoadingRules, clientcmd.ClientConfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := loader.ClientConfig()
	return cfg, rules, loader, err
}

// Client is a clientset and its configuration for kubeconfig and context, as the cluster target
// makes them (loadConfig), for volperm's other commands on a cluster.
func Client(kubeconfig, context string) (*rest.Config, kubernetes.Interface, error) {
	cfg, _, _, err := loadConfig(kubeconfig, context)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, c, nil
}

// KnownDifference explains a failure the real v1.37 kubelet is known for (knowndiff).
func (t *Target) KnownDifference(c *framework.Case) (framework.KnownDifference, bool) {
	return knowndiff.Explain(c)
}

var _ framework.RunBatcher = (*Target)(nil)
