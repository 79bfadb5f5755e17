// Package execagent drives an agent of volperm's exec protocol (docs/exec-protocol.md, package
// execproto) as an apiserver half (APIServer: admit) and a kubelet half (Node): the harness
// asks the agent to set the volumes up in directories it gives, observes those directories
// itself, runs the probes itself, and asks the agent to tear down. A misbehaving agent
// (non-zero exit, invalid JSON, another protocol version, a time-out, writes outside its
// directories, mounts left behind) gets a verdict, never a hang. The targets "exec:PATH" (any
// agent) and "upstream" (the real Kubernetes code built into an agent) are made of it.
package execagent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"github.com/volperm/volperm/nodeimpl/userns"
)

// Name is the name an agent's halves report, and the owner of the environment knobs (env.go).
const Name = "exec"

// DefaultTimeout bounds one agent call unless VOLPERM_AGENT_TIMEOUT says otherwise.
const DefaultTimeout = 30 * time.Second

// maxOutput bounds what is read of an agent's stdout and stderr.
const maxOutput = 4 << 20

// Node drives one agent executable as the kubelet (driver: one long-lived `AGENT serve` for
// the run when the agent serves, else a process per call). Its case roots are made below the
// driver's work dir, the one place its sandbox lets the agent write and mount.
type Node struct {
	*driver
	roots *caseroot.Roots
}

// NewNode checks the agent and the work dir (newDriver).
func NewNode(opts framework.TargetOptions) (*Node, error) {
	d, err := newDriver(opts, true)
	if err != nil {
		return nil, err
	}
	roots, err := caseroot.New(d.work)
	if err != nil {
		return nil, errors.Join(err, d.close())
	}
	return &Node{driver: d, roots: roots}, nil
}

// Info names the agent and how it is driven.
func (t *Node) Info() framework.TargetInfo {
	return framework.TargetInfo{Name: Name, Details: t.details()}
}

// SupportsNode: the agent runs on this machine as the harness's user, like the reference node.
func (t *Node) SupportsNode(c *framework.Case, a framework.Admitted) (bool, string) {
	for _, f := range protocolFeatures {
		if !f.needed(c, a.Pod) {
			continue
		}
		if ok, why := t.hasFeature(f.name); !ok {
			return false, f.lacking + ": " + why
		}
	}
	if framework.ChangesKubeletRelease(c) {
		return false, "a kubeletRelease step replaces the kubelet by another release's: an agent is the kubelet of one release (kind@matrix and the reference run it)"
	}
	if framework.UpdatesSources(c) {
		for _, v := range a.Pod.Spec.Volumes {
			if v.Secret == nil && v.ConfigMap == nil && v.DownwardAPI == nil && v.Projected == nil {
				return false, "an updateSources step is a setup with the new sources, which sets every volume up again: only pods whose volumes are all secret, configMap, downwardAPI or projected are run that way"
			}
		}
	}
	return true, ""
}

// protocolFeature is an optional part of the protocol (docs/exec-protocol.md "Features"): the
// cases that need it of an agent, and what a case the agent cannot run for want of it says. Each
// is also the claim of the same name (framework.Features; issue 51: an agent whose hello lacks
// one is certified without its cases), so that its cases are those the claim requires
// (TestProtocolFeaturesAreClaims).
type protocolFeature struct {
	name    string
	needed  func(c *framework.Case, pod *corev1.Pod) bool
	lacking string
}

// protocolFeatures are the parts of the protocol an agent lists in its hello.
var protocolFeatures = []protocolFeature{
	{execproto.FeatureUserNamespaces, func(_ *framework.Case, pod *corev1.Pod) bool { return framework.InUserNamespace(pod) },
		"hostUsers: false: the agent does not say it runs a pod in a user namespace of its own (docs/exec-protocol.md \"User namespaces\")"},
	{execproto.FeatureSupplementalGroupsPolicy, func(c *framework.Case, pod *corev1.Pod) bool {
		sc := pod.Spec.SecurityContext
		return framework.HasContainerProbes(c) || (sc != nil && sc.SupplementalGroupsPolicy != nil)
	}, "supplementalGroupsPolicy or probes as the container: the agent does not say it admits pods by the policy and gives its container's config (docs/exec-protocol.md \"Container groups\")"},
	{execproto.FeatureVolumeBindMountOptions, func(_ *framework.Case, pod *corev1.Pod) bool { return framework.UsesBindMountOptions(pod) },
		"bindMountOptions: the agent does not say it admits such pods by its declared node features (docs/exec-protocol.md \"Bind mount options\")"},
	// Image volumes came after protocol v1 (issue 51: the protocol never moves silently).
	{execproto.FeatureImageVolumes, func(_ *framework.Case, pod *corev1.Pod) bool {
		return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Image != nil })
	}, "an image volume: the agent does not say it leaves image volumes to the runtime (docs/exec-protocol.md \"Image volumes\")"},
	// A persistentVolumeClaim volume on a node comes with seLinux (framework/selinux.go
	// validateSELinux): this gate is theirs too.
	{execproto.FeatureSELinuxMount, func(c *framework.Case, _ *corev1.Pod) bool { return c.SELinux != nil },
		"a node with SELinux on: the agent does not say its kubelet makes SELinux mount decisions (docs/exec-protocol.md \"SELinux mount decisions\")"},
}

// needsFeatures lists the features of the protocol an agent needs to run c's node side after
// admission a (as SupportsNode asks them of the agent's hello).
func needsFeatures(c *framework.Case, a framework.Admitted) []string {
	var out []string
	for _, f := range protocolFeatures {
		if f.needed(c, a.Pod) {
			out = append(out, f.name)
		}
	}
	return out
}

// CheckClaims refuses a claim of a protocol feature the agent's hello does not list
// (framework.ClaimChecker): its cases would be required and none could run (issue 51).
func (t *Node) CheckClaims(claims []string) error {
	for _, f := range protocolFeatures {
		if !slices.Contains(claims, f.name) {
			continue
		}
		if ok, why := t.hasFeature(f.name); !ok {
			return fmt.Errorf("--claim %s, but the agent does not implement that part of the protocol: %s (docs/exec-protocol.md \"Features\"): list it in the agent's hello, or drop the claim (its cases are then not applicable)", f.name, why)
		}
	}
	return nil
}

// HostNeeds: the harness creates the host fixtures and runs the probes as other uids, and the
// agent sets the pod up on this machine as the reference kubelet would (kubelet.HostNeeds).
func (t *Node) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return kubelet.HostNeeds(a.Pod)
}

// Close stops the serving agent, removes every case root left by a cancelled run, and the work
// dir.
func (t *Node) Close() error {
	t.stop()
	return errors.Join(t.roots.RemoveAll(), t.close())
}

// ObserveNode runs the node lifecycle (framework/lifecycle) of the admitted pod with the agent
// as the kubelet (docs/spec.md steps 3-8): the harness makes the case root, the host fixtures
// and the fixture driver's storage, the agent sets up, restarts and tears down, the harness
// snapshots and probes.
func (t *Node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	root, err := t.roots.Make("volperm-exec-")
	if err != nil {
		return framework.NodeResult{Err: err}
	}
	r := t.observe(ctx, c, a, root)
	if rerr := t.roots.Remove(root); rerr != nil {
		r = framework.NodeResult{Err: errors.Join(r.Err, rerr)}
	}
	return r
}

// observe is ObserveNode in the case root root.
func (t *Node) observe(ctx context.Context, c *framework.Case, a framework.Admitted, root string) framework.NodeResult {
	failed := func(err error) framework.NodeResult { return framework.NodeResult{Err: err} }
	var err error
	p := &agentPod{node: t, root: root, dirs: map[string]string{}, req: &execproto.Request{
		ProtocolVersion:     execproto.Version,
		Attempt:             1,
		Pod:                 a.Pod,
		PreservePermissions: a.Admission.PreservePermissions,
		KubeletGates:        allGates(gates.Set(c.Gates.Kubelet)),
		HostRoot:            filepath.Join(root, "host"),
		StateDir:            filepath.Join(root, "state"),
		Sources:             c.Sources,
		RuntimeLacks:        t.runtimeLacks(c),
		SELinux:             seLinux(c.SELinux),
	}}
	for _, v := range a.Pod.Spec.Volumes {
		if v.HostPath != nil {
			p.dirs[v.Name] = hostfix.Path(p.req.HostRoot, v.HostPath.Path)
			continue
		}
		if v.Image != nil || v.PersistentVolumeClaim != nil {
			// The runtime's (docs/exec-protocol.md "Image volumes"), or a PersistentVolume
			// volperm does not mount ("SELinux mount decisions"): no directory.
			continue
		}
		d := filepath.Join(root, "volumes", v.Name)
		p.req.Volumes = append(p.req.Volumes, execproto.Volume{Name: v.Name, Dir: d})
		p.dirs[v.Name] = d
	}
	// nsDir is the runtime's: the pod's idmapped and read-only volume mounts, not the agent's.
	p.nsDir = filepath.Join(root, runtimeDir)
	dirs := []string{p.req.HostRoot, p.req.StateDir, filepath.Join(root, "volumes"), p.nsDir}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0755); err != nil {
			return failed(err)
		}
	}
	if err := hostfix.Create(p.req.HostRoot, c.Host); err != nil {
		return failed(err)
	}
	if err := populateFixtures(a.Pod, c.Storage, p.dirs); err != nil {
		return failed(err)
	}
	if p.guard, err = newGuard(root, p.req); err != nil {
		return failed(err)
	}
	return lifecycle.Observe(ctx, c, a, p)
}

// runtimeDir is the directory of a case root where the harness, playing the container
// runtime, mounts the volumes of a pod with hostUsers: false idmapped (IDMappedMount).
const runtimeDir = "runtime"

// agentPod is one pod on the agent (lifecycle.Pod): every call carries req, which says where
// each volume goes (dirs, chosen by the harness) and which attempt a SetUp is. For a pod with
// hostUsers: false (lifecycle.UserNamespaced) ns is the pod's range as the agent's setups
// answered it, and nsDir where the harness mounts its volumes idmapped.
type agentPod struct {
	node  *Node
	root  string
	req   *execproto.Request
	dirs  map[string]string
	guard *guard
	ns    *execproto.UserNamespace
	nsDir string
	// sandbox is the last setup's sandboxError.
	sandbox string
	// container is the last setup's container config.
	container *execproto.ContainerSecurity
}

// SetUp is `AGENT setup`, attempt 1.
func (p *agentPod) SetUp(ctx context.Context) (lifecycle.Volumes, error) {
	res, resp, err := p.node.setUp(ctx, p.req, p.guard)
	if err != nil {
		return nil, err
	}
	if r := resp.Rejected; r != nil {
		return nil, &lifecycle.Rejected{Reason: r.Reason, Message: r.Message}
	}
	p.container = resp.Container
	if p.sandbox = resp.SandboxError; p.sandbox != "" {
		if resp.UserNamespace != nil {
			return nil, fmt.Errorf("agent setup answered both a sandboxError and a userNamespace: a pod whose sandbox fails has no user namespace")
		}
	} else if err := p.checkUserNamespace(resp.UserNamespace); err != nil {
		return nil, err
	}
	out := lifecycle.Volumes{}
	for name, r := range res {
		v := lifecycle.Volume{Path: p.dirs[name], SELinuxMount: r.SELinuxMount}
		if !r.OK {
			v.Err = r.Error
		}
		out[name] = v
	}
	return out, nil
}

// SetGates: the next setup carries the value of every kubelet gate (allGates).
func (p *agentPod) SetGates(_ context.Context, g map[string]bool) error {
	p.req.KubeletGates = allGates(gates.Set(g))
	return nil
}

// Restart is `AGENT setup` with the next attempt number: the agent's state dir is all a
// restarted kubelet has.
func (p *agentPod) Restart(ctx context.Context) (lifecycle.Volumes, error) {
	p.req.Attempt++
	return p.SetUp(ctx)
}

// UpdateSources is `AGENT setup` with the next attempt number and the new sources
// (docs/exec-protocol.md "attempt"): the agent sets every volume up again, which is the
// kubelet's sync for a pod whose volumes all need a remount (SupportsNode runs no other).
func (p *agentPod) UpdateSources(ctx context.Context, sources map[string]map[string]string) (lifecycle.Volumes, error) {
	p.req.Sources = sources
	p.req.Attempt++
	return p.SetUp(ctx)
}

// checkUserNamespace checks the user namespace a setup answered (execproto.SetUpResponse): one
// for a pod with hostUsers: false and none for another. Its size, alignment and whether a
// restarted kubelet kept it are observed (lifecycle.Observe: Observation.userNamespace), not
// refused here.
func (p *agentPod) checkUserNamespace(ns *execproto.UserNamespace) error {
	if !framework.InUserNamespace(p.req.Pod) {
		if ns != nil {
			return fmt.Errorf("agent setup answered a user namespace (hostID %d, length %d) for a pod without hostUsers: false, which runs in the node's", ns.HostID, ns.Length)
		}
		return nil
	}
	if ns == nil {
		return fmt.Errorf("agent setup (attempt %d) gave no userNamespace for a pod with hostUsers: false, though its hello lists %q", p.req.Attempt, execproto.FeatureUserNamespaces)
	}
	if ns.Length == 0 || uint64(ns.HostID)+uint64(ns.Length) > 1<<32 {
		return fmt.Errorf("agent setup answered the user namespace hostID %d, length %d, which is no range of host ids", ns.HostID, ns.Length)
	}
	p.ns = ns
	return nil
}

// ContainerSecurity is the container config the last setup answered (lifecycle.Containered).
func (p *agentPod) ContainerSecurity(context.Context) (framework.ContainerSecurity, error) {
	c := p.container
	if c == nil {
		return framework.ContainerSecurity{}, fmt.Errorf("agent setup gave no container config for pod %s, though its hello lists %q", p.req.Pod.Name, execproto.FeatureSupplementalGroupsPolicy)
	}
	return framework.ContainerSecurity{RunAsUser: c.RunAsUser, RunAsGroup: c.RunAsGroup, SupplementalGroups: c.SupplementalGroups, Strict: c.Strict}, nil
}

// UserNamespace is the pod's range as the agent's setups answered it, and the directory where
// the harness, playing the runtime, mounts the pod's volumes (lifecycle.UserNamespaced).
func (p *agentPod) UserNamespace(context.Context) (framework.IDMap, error) {
	if p.sandbox != "" {
		return framework.IDMap{}, &lifecycle.SandboxError{Msg: p.sandbox}
	}
	if p.ns == nil {
		return framework.IDMap{}, fmt.Errorf("agent setup gave no user namespace for pod %s", p.req.Pod.Name)
	}
	return framework.IDMap{HostID: p.ns.HostID, Length: p.ns.Length}, nil
}

// RuntimeDir is where the harness, playing the runtime, mounts the pod's volumes for its
// containers (lifecycle.Runtime); unmountRuntime empties it.
func (p *agentPod) RuntimeDir() string { return p.nsDir }

// IDMappedMount is the runtime's idmapped bind mount of a volume, as for the reference node
// (nodeimpl/userns Mount; lifecycle.UserNamespaced): the harness plays the runtime.
func (p *agentPod) IDMappedMount(src, dst string, m framework.IDMap) error {
	return userns.Mount(src, dst, userns.Mapping{HostID: m.HostID, Length: m.Length})
}

// unmountRuntime is the runtime's part of the pod's end, before the kubelet tears its volumes
// down: every mount below nsDir (idmapped, read-only) is unmounted and its mount point removed, leaving
// nsDir as it was before the first setup.
func (p *agentPod) unmountRuntime() error {
	if p.nsDir == "" {
		return nil
	}
	entries, err := os.ReadDir(p.nsDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		dst := filepath.Join(p.nsDir, e.Name())
		// Deepest first: a volume bound with a mount below it (its storage's tmpfs) is two.
		if err := mountinfo.UnmountBelow(dst); err != nil {
			errs = append(errs, fmt.Errorf("the runtime's mounts below %s: %w", dst, err))
			continue
		}
		if err := mountinfo.Unmount(dst, unix.UMOUNT_NOFOLLOW); err != nil && err != unix.EINVAL {
			errs = append(errs, fmt.Errorf("unmount the runtime's mount %s: %w", dst, err))
			continue
		}
		// A mount point, or an image volume's unpacked files (lifecycle imageVolumes): nothing
		// is mounted below any more.
		if err := os.RemoveAll(dst); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// TearDown is the runtime's unmount of the idmapped mounts (unmountRuntime), then `AGENT
// teardown`, then the checks that it unmounted everything it mounted and wrote nowhere outside
// its directories.
func (p *agentPod) TearDown(ctx context.Context) error {
	if err := p.unmountRuntime(); err != nil {
		return err
	}
	// The fixture driver's submounts (storage entries with mount), which the harness made playing
	// the driver: its unmount, before the kubelet's teardown removes the volume.
	for _, v := range p.req.Pod.Spec.Volumes {
		if v.FlexVolume != nil && v.FlexVolume.Driver == framework.FixtureDriver {
			if err := flexvolume.Unmount(p.dirs[v.Name]); err != nil {
				return err
			}
		}
	}
	out, version, err := p.node.call(ctx, execproto.OpTearDown, p.req)
	if err != nil {
		return err
	}
	var td execproto.TearDownResponse
	if err := decode(out, &td, version); err != nil {
		return fmt.Errorf("agent %s: %w", execproto.OpTearDown, err)
	}
	if !td.OK {
		return fmt.Errorf("agent teardown failed: %s", td.Error)
	}
	if m, _ := mountinfo.AtOrBelow(p.root); len(m) > 0 {
		return fmt.Errorf("agent teardown left %d mount(s) behind, e.g. %s: teardown must unmount what setup mounted", len(m), m[0])
	}
	return p.guard.check()
}

// setUp calls `AGENT setup` and checks its answer covers every volume exactly once; it also
// returns the user namespace the answer gives, if any.
func (t *Node) setUp(ctx context.Context, req *execproto.Request, g *guard) (map[string]execproto.VolumeResult, *execproto.SetUpResponse, error) {
	out, version, err := t.call(ctx, execproto.OpSetUp, req)
	if err != nil {
		return nil, nil, err
	}
	if err := g.check(); err != nil {
		return nil, nil, err
	}
	res, err := decodeSetUp(out, volumeNames(req), version)
	if err != nil {
		return nil, nil, err
	}
	var resp execproto.SetUpResponse
	_ = json.Unmarshal(out, &resp) // decodeSetUp read it already
	return res, &resp, nil
}

func volumeNames(req *execproto.Request) []string {
	var names []string
	for _, v := range req.Pod.Spec.Volumes {
		names = append(names, v.Name)
	}
	return names
}

// decodeSetUp reads an agent's setup answer: one SetUpResponse of protocol version with
// exactly one result per volume of the pod, each failed one with its text (FuzzDecodeSetUp).
func decodeSetUp(out []byte, volumes []string, version string) (map[string]execproto.VolumeResult, error) {
	var resp execproto.SetUpResponse
	if err := decode(out, &resp, version); err != nil {
		return nil, fmt.Errorf("agent %s: %w", execproto.OpSetUp, err)
	}
	got := map[string]execproto.VolumeResult{}
	if r := resp.Rejected; r != nil {
		// docs/exec-protocol.md "Container groups": a rejected pod has nothing set up.
		if r.Reason == "" || r.Message == "" || len(resp.Volumes) > 0 || resp.Container != nil {
			return nil, fmt.Errorf("agent setup: a rejected pod needs a reason and a message, and has no volumes and no container")
		}
		return got, nil
	}
	for _, r := range resp.Volumes {
		if _, dup := got[r.Name]; dup {
			return nil, fmt.Errorf("agent setup answered twice for volume %q", r.Name)
		}
		if !r.OK && r.Error == "" {
			return nil, fmt.Errorf("agent setup: volume %q is not ok but has no error text", r.Name)
		}
		got[r.Name] = r
	}
	for _, v := range volumes {
		if _, ok := got[v]; !ok {
			return nil, fmt.Errorf("agent setup gave no result for volume %q", v)
		}
		delete(got, v)
	}
	for name := range got {
		return nil, fmt.Errorf("agent setup answered for volume %q, which the pod does not have", name)
	}
	for _, r := range resp.Volumes {
		got[r.Name] = r
	}
	return got, nil
}

// call has the agent answer a setup or teardown of req (callMessage).
func (t *Node) call(ctx context.Context, op string, req *execproto.Request) ([]byte, string, error) {
	return t.callMessage(ctx, execproto.Message{Op: op, Request: req})
}

// callProcess runs `AGENT op` with in on stdin, in dir, in its own process group.
func (t *driver) callProcess(ctx context.Context, op, dir string, in []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cmd := osexec.Command(t.agent, op)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	// Every process the agent starts inherits this token: whatever still carries it after the
	// call is a process the agent left running (survivors).
	token := callToken()
	cmd.Env = append(os.Environ(), envCallToken+"="+token)
	stdout, stderr := newLimited(maxOutput), newLimited(maxOutput)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A child that keeps stdout open after the agent exited (a daemon) must not hold the
	// harness: Wait gives up on the pipes this long after the agent's exit.
	cmd.WaitDelay = 500 * time.Millisecond
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := t.startCmd(cmd); err != nil {
		return nil, fmt.Errorf("start agent %s %s: %w", t.agent, op, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-stdout.full:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		killSurvivors(token, 0)
		return nil, fmt.Errorf("agent %s wrote more than %d bytes to stdout: killed it; answer with one JSON object", op, maxOutput)
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the agent and every child it started
		<-done
		killSurvivors(token, 0)
		if ctx.Err() == context.DeadlineExceeded {
			return nil, t.timeoutErr(op)
		}
		return nil, ctx.Err()
	}
	if left := killSurvivors(token, 0); len(left) > 0 {
		return nil, survivorsErr(op, left)
	}
	if errors.Is(err, osexec.ErrWaitDelay) {
		return nil, fmt.Errorf("agent %s exited but something kept its stdout open: an agent must exit with everything it started", op)
	}
	if err != nil {
		var exit *osexec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("agent %s exited with status %d: %s", op, exit.ExitCode(), tail(stderr.String()))
		}
		return nil, fmt.Errorf("agent %s: %w", op, err)
	}
	if stdout.over {
		return nil, fmt.Errorf("agent %s wrote more than %d bytes to stdout: answer with one JSON object", op, maxOutput)
	}
	return stdout.Bytes(), nil
}

// envCallToken carries each call's token into the agent and everything it starts.
const envCallToken = "VOLPERM_AGENT_CALL"

func callToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// timeoutErr is the verdict on a call that did not answer within the time-out.
func (t *driver) timeoutErr(op string) error {
	return fmt.Errorf("agent %s did not answer within %s: killed it (raise VOLPERM_AGENT_TIMEOUT if it is just slow)", op, t.timeout)
}

// survivorsErr is the verdict on a call that left processes running (killSurvivors).
func survivorsErr(op string, left []string) error {
	return fmt.Errorf("agent %s left %d process(es) running (%s): killed them; an agent must exit with everything it started", op, len(left), strings.Join(left, ", "))
}

// errVersion marks an answer in another protocol version.
type errVersion struct{ got, want string }

func (e errVersion) Error() string {
	return fmt.Sprintf("agent speaks protocol version %q; volperm speaks %q", e.got, e.want)
}

// decode reads exactly one JSON object with protocolVersion version.
func decode(out []byte, v any, version string) error {
	if err := probe.DecodeOne(out, v); err != nil {
		return fmt.Errorf("invalid JSON on stdout (%v): %q", err, tail(string(out)))
	}
	var ver struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(out, &ver)
	if ver.ProtocolVersion != version {
		return errVersion{got: ver.ProtocolVersion, want: version}
	}
	return nil
}

// populateFixtures plays the volperm/fixture flexVolume driver's part: its storage is mounted
// (here: created, 0750 like kubelet's prepareForMount) before the kubelet part runs.
func populateFixtures(pod *corev1.Pod, storage map[string][]framework.File, dirs map[string]string) error {
	for _, v := range pod.Spec.Volumes {
		if v.FlexVolume == nil || v.FlexVolume.Driver != framework.FixtureDriver {
			continue
		}
		if err := refnode.PopulateStorage(dirs[v.Name], storage[v.Name]); err != nil {
			return fmt.Errorf("flexVolume fixture %q: %w", v.Name, err)
		}
	}
	return nil
}

func allGates(s gates.Set) map[string]bool {
	out := map[string]bool{}
	for _, name := range gates.Known() {
		out[name] = s.Enabled(name)
	}
	return out
}

// limited is a buffer that stops growing at max bytes and says so.
// Past max it closes full once, so that the harness stops an agent flooding its output at once
// rather than reading it to the end.
//
// The buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom would let io.Copy
// (which os/exec uses) read the whole stream past Write and its limit.
type limited struct {
	buf  bytes.Buffer
	max  int
	over bool
	full chan struct{}
}

func newLimited(max int) *limited { return &limited{max: max, full: make(chan struct{})} }

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); len(p) > room {
		if !l.over {
			l.over = true
			close(l.full)
		}
		if room > 0 {
			l.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}

// Bytes and String are what was kept.
func (l *limited) Bytes() []byte  { return l.buf.Bytes() }
func (l *limited) String() string { return l.buf.String() }

var _ io.Writer = (*limited)(nil)

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return s
}

// guard detects writes outside the directories the agent was given: every entry of the case
// root outside them (its mode, owner, size and time; the case root's own mode and owner) is
// recorded before the first call and compared after each call.
type guard struct {
	root    string
	allowed []string
	before  map[string]string
}

func newGuard(root string, req *execproto.Request) (*guard, error) {
	g := &guard{root: root, allowed: []string{req.HostRoot, req.StateDir}}
	for _, v := range req.Volumes {
		g.allowed = append(g.allowed, v.Dir)
	}
	var err error
	g.before, err = g.list()
	return g, err
}

func (g *guard) list() (map[string]string, error) {
	out := map[string]string{}
	err := filepath.Walk(g.root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		for _, a := range g.allowed {
			if p == a {
				if info.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		owner := ""
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			owner = fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		}
		if p == g.root || p == filepath.Join(g.root, "volumes") || p == filepath.Join(g.root, runtimeDir) {
			// Entries appear in these as volumes are set up: their mode and owner must not change.
			out[p] = fmt.Sprintf("%v %s", info.Mode(), owner)
			return nil
		}
		out[p] = fmt.Sprintf("%v %s %d %d", info.Mode(), owner, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return out, err
}

func (g *guard) check() error {
	now, err := g.list()
	if err != nil {
		return err
	}
	var bad []string
	for p, v := range now {
		if g.before[p] != v {
			bad = append(bad, p)
		}
	}
	for p := range g.before {
		if _, ok := now[p]; !ok {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("agent wrote outside the directories it was given: %s (allowed: the volume dirs, hostRoot, stateDir)", strings.Join(bad, ", "))
}

// seLinux is s as the protocol spells it; nil for a node with SELinux off.
func seLinux(s *framework.SELinux) *execproto.SELinux {
	if s == nil {
		return nil
	}
	return &execproto.SELinux{Claims: s.Claims, CSIDrivers: s.CSIDrivers, Running: s.Running}
}

// runtimeLacks is c's RuntimeLacks as the protocol spells them, each only when the agent's
// hello lists the feature that carries it (execproto.RuntimeLackFeature; issue 51).
func (t *Node) runtimeLacks(c *framework.Case) []string {
	var out []string
	for _, f := range c.RuntimeLacks {
		if feature, ok := execproto.RuntimeLackFeature[string(f)]; ok {
			if has, _ := t.hasFeature(feature); has {
				out = append(out, string(f))
			}
		}
	}
	return out
}
