// Package container is the target "container": the volume as a workload sees it. The reference
// node (nodeimpl/kubelet) prepares a case's volumes on this machine under a case root; real
// containers of a Docker engine, started with testcontainers-go, bind-mount them (tmpfs and
// hugetlbfs exactly as the node mounted them) as the pod's volumeMounts say, and the static probe
// binary (package incontainer, image volperm/probe:<hash>) snapshots and probes them from inside,
// as the uid/gid/groups the container runs as. Admission runs like the reference target's.
//
// Batching: a suite that calls Prepare with many cases gets one container per distinct user set
// for all of them (each case's volumes under /case-N/...); Observe then only execs the probe.
// Cases not prepared, or a target built with "container:per-case", start their own containers.
package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/framework/targets/container/incontainer"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/hostpath"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Name is the name the target registers under.
const Name = "container"

// ArgPerCase is the target argument ("container:per-case") that turns batching off.
const ArgPerCase = "per-case"

// EnvRequire is the environment variable that, naming this target (or CI=true), makes a missing
// engine a failure of the suites instead of a report line (Supports still says why).
const EnvRequire = "VOLPERM_REQUIRE"

func init() {
	framework.RegisterTarget(Name, "volumes prepared by the reference node, seen from inside real Docker containers run as the pod's users (testcontainers-go; arg per-case turns batching off)", New)
}

// Batcher is the optional hook of a target that can share set-up between cases. A suite that
// knows its cases up front calls Prepare once with all of them (after filtering by Supports),
// then Observe for each as usual, then Close. Prepare may be called again for the next batch:
// what the previous batch still holds is released first.
type Batcher interface {
	Prepare(ctx context.Context, cases []*framework.Case) error
}

// Stats count what the target did, for reports and for measuring batching.
type Stats struct {
	// ContainerStarts is how many containers were started.
	ContainerStarts int `json:"containerStarts"`
	// Execs is how many times the probe was run inside a container.
	Execs int `json:"execs"`
}

// Target runs cases in containers.
type Target struct {
	roots   *caseroot.Roots
	perCase bool
	run     string

	mu        sync.Mutex
	eng       *engine
	engErr    error
	connected bool
	batch     *batch
	stats     Stats
	absent    map[string]string
}

var (
	_ framework.Target = (*Target)(nil)
	_ Batcher          = (*Target)(nil)
)

// New builds the container target. opts.Arg is "" (batched) or "per-case". It does not reach the
// engine yet: a missing engine makes Supports say so for every case that needs a node.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" && opts.Arg != ArgPerCase {
		return nil, fmt.Errorf("target %q takes no argument or %q (got %q)", Name, ArgPerCase, opts.Arg)
	}
	// testcontainers-go's reaper (Ryuk) would pull an image from a registry; the target removes
	// its containers itself.
	if err := os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true"); err != nil {
		return nil, err
	}
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Target{
		roots:   roots,
		perCase: opts.Arg == ArgPerCase,
		run:     strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid()),
		absent:  map[string]string{},
	}, nil
}

// engine connects once and imports the probe image; a failure is remembered.
func (t *Target) engine(ctx context.Context) (*engine, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.connected {
		t.connected = true
		t.eng, t.engErr = connect(ctx, t.run)
		if t.engErr == nil {
			if t.engErr = t.eng.ensureImage(ctx); t.engErr != nil {
				t.eng.cli.Close()
				t.eng = nil
			}
		}
	}
	return t.eng, t.engErr
}

// Info names the target, the engine and the probe image.
func (t *Target) Info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Details: map[string]string{"engineHost": engineHost(), "mode": "batched"}}
	if t.perCase {
		info.Details["mode"] = ArgPerCase
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.eng != nil {
		info.Version = "docker " + t.eng.version
		info.Details["apiVersion"] = t.eng.apiVersion
		info.Details["image"] = t.eng.image
	}
	info.Details["containerStarts"] = strconv.Itoa(t.stats.ContainerStarts)
	return info
}

// Stats returns what the target did so far.
func (t *Target) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Supports tells whether c can run here: admission-only cases always; cases that reach a node
// need what the reference node needs (root, hugetlbfs), an engine, mounts without subPath, and
// hostPath volumes where something exists after set-up.
func (t *Target) Supports(c *framework.Case) (bool, string) {
	cc := reference.CopyCase(c)
	cc.Complete()
	res := reference.Admit(cc)
	if !reachesNode(cc, res) {
		return true, ""
	}
	if ok, why := reference.SupportsHere(cc); !ok {
		return false, why
	}
	for _, ctr := range res.Pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.SubPath != "" || m.SubPathExpr != "" {
				return false, fmt.Sprintf("volumeMount %q of container %q uses subPath: the container target mounts whole volumes only", m.Name, ctr.Name)
			}
		}
	}
	if _, err := t.engine(context.Background()); err != nil {
		why := err.Error()
		if required() {
			why += " (required here: " + EnvRequire + " or CI=true)"
		}
		return false, why
	}
	if why := t.hostPathAbsent(cc, res.Pod); why != "" {
		return false, why
	}
	return true, ""
}

// required reports whether this run must have the container target (CI=true or
// VOLPERM_REQUIRE naming "container" in its comma-separated list).
func required() bool {
	if os.Getenv("CI") == "true" {
		return true
	}
	for _, n := range strings.Split(os.Getenv(EnvRequire), ",") {
		if strings.TrimSpace(n) == Name {
			return true
		}
	}
	return false
}

func reachesNode(c *framework.Case, res admission.Result) bool {
	return res.Allowed && !c.AdmissionOnly && c.Pod != nil && c.PersistentVolume == nil
}

// hostPathAbsent sets up c's hostPath volumes alone on a scratch host and says why the case is
// unsupported when one of them has nothing at its path afterwards (docs/spec.md "Snapshot":
// `absent`). The kubelet leaves that path to the runtime: containerd and CRI-O create a
// directory, Docker's mount API refuses the bind. What a container sees there is the runtime's
// choice, not the node's, so the target does not claim an answer. Cached per case name.
func (t *Target) hostPathAbsent(c *framework.Case, pod *corev1.Pod) string {
	t.mu.Lock()
	why, done := t.absent[c.Name]
	t.mu.Unlock()
	if done {
		return why
	}
	why = t.checkHostPaths(c, pod)
	t.mu.Lock()
	t.absent[c.Name] = why
	t.mu.Unlock()
	return why
}

func (t *Target) checkHostPaths(c *framework.Case, pod *corev1.Pod) (why string) {
	var vols []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			vols = append(vols, v)
		}
	}
	if len(vols) == 0 {
		return ""
	}
	root, err := t.roots.Make("volperm-ctr-check-")
	if err != nil {
		return "cannot check hostPath set-up: " + err.Error()
	}
	defer func() {
		if err := t.roots.Remove(root); err != nil && why == "" {
			why = "cannot check hostPath set-up: " + err.Error()
		}
	}()
	if err := hostfix.Create(root, c.Host); err != nil {
		return "cannot check hostPath set-up: " + err.Error()
	}
	h := hostpath.Host{Root: root}
	for _, v := range vols {
		// In pod order, as the kubelet sets them up: one volume's *OrCreate may make another's path.
		if h.SetUp(v.HostPath.Path, v.HostPath.Type) != nil {
			continue
		}
		paths, err := snapshot.Root(h.RealPath(v.HostPath.Path))
		if err != nil {
			return "cannot check hostPath set-up: " + err.Error()
		}
		if paths[0].Type == snapshot.Absent {
			return fmt.Sprintf("hostPath volume %q: nothing exists at %s after set-up; what a container sees there is the runtime's choice (containerd creates a directory, Docker refuses the bind), not the node's", v.Name, v.HostPath.Path)
		}
	}
	return ""
}

// prepared is one case whose host side is set up, waiting for its snapshot and probes.
type prepared struct {
	c    *framework.Case
	obs  *framework.Observation
	root string
	k    *kubelet.Kubelet
	pod  *kubelet.Pod
	// vols are the volumes set up, with where the container sees them.
	vols  []incontainer.Volume
	binds []bind
	// inside maps a volume name to its path inside the containers.
	inside map[string]string
}

// batch is a set of prepared cases sharing containers, one per user set.
type batch struct {
	cases map[string]*prepared
	// containers maps userKey to a container id.
	containers map[string]string
	// errs are host-side set-up failures by case name: Observe returns them.
	errs map[string]error
}

// rootUser is the user the snapshot runs as: root reads every directory, like the kubelet's stat.
var rootUser = framework.User{UID: 0, GID: 0}

// Prepare sets up the host side of every case that reaches a node and starts one container per
// distinct user set with all their volumes mounted. A case that fails on the host side is
// reported by its Observe. In per-case mode it does nothing.
func (t *Target) Prepare(ctx context.Context, cases []*framework.Case) error {
	if t.perCase {
		return nil
	}
	if err := t.release(ctx); err != nil {
		return err
	}
	var todo []*framework.Case
	for _, c := range cases {
		if ok, _ := t.Supports(c); !ok {
			continue
		}
		cc := reference.CopyCase(c)
		cc.Complete()
		if reachesNode(cc, reference.Admit(cc)) {
			todo = append(todo, cc)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	b, err := t.prepare(ctx, todo, true)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.batch = b
	t.mu.Unlock()
	return nil
}

// prepare sets up the host side of cases (completed, reaching a node) and starts their
// containers. With prefixed, case i's mounts live under /case-i; otherwise (one case) at the
// pod's own mount paths.
func (t *Target) prepare(ctx context.Context, cases []*framework.Case, prefixed bool) (*batch, error) {
	eng, err := t.engine(ctx)
	if err != nil {
		return nil, err
	}
	b := &batch{cases: map[string]*prepared{}, containers: map[string]string{}, errs: map[string]error{}}
	users := map[string]framework.User{userKey(rootUser): rootUser}
	var binds []bind
	for i, c := range cases {
		prefix := ""
		if prefixed {
			prefix = "/case-" + strconv.Itoa(i)
		}
		p, err := t.setUpHost(ctx, c, prefix)
		if err != nil {
			b.errs[c.Name] = err
			continue
		}
		b.cases[c.Name] = p
		binds = append(binds, p.binds...)
		for _, pr := range c.Probes {
			users[userKey(pr.As)] = pr.As
		}
	}
	if len(b.cases) == 0 {
		return b, nil
	}
	// Start the containers concurrently: a start is mostly waiting for the engine.
	type started struct {
		key, id string
		err     error
	}
	ch := make(chan started, len(users))
	for key, u := range users {
		go func() {
			id, err := eng.start(ctx, u, binds)
			ch <- started{key, id, err}
		}()
	}
	var errs []error
	for range users {
		s := <-ch
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		b.containers[s.key] = s.id
		t.mu.Lock()
		t.stats.ContainerStarts++
		t.mu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, t.releaseBatch(ctx, b))
	}
	return b, nil
}

// setUpHost runs docs/spec.md steps 1-5 for c on the reference node under a new case root and
// plans its mounts.
func (t *Target) setUpHost(ctx context.Context, c *framework.Case, prefix string) (p *prepared, err error) {
	res := reference.Admit(c)
	root, err := t.roots.Make("volperm-ctr-")
	if err != nil {
		return nil, err
	}
	p = &prepared{c: c, root: root, inside: map[string]string{}, obs: &framework.Observation{
		APIVersion: framework.ObservationVersion,
		Case:       c.Name,
		Source:     Name,
		Admission: framework.Admission{
			Allowed:             res.Allowed,
			Errors:              res.Errors,
			Dropped:             res.Dropped,
			PreservePermissions: res.PreservePermissions,
		},
	}}
	hostRoot, kubeletRoot := filepath.Join(root, "host"), filepath.Join(root, "kubelet")
	p.k, err = kubelet.New(kubelet.Config{RootDir: kubeletRoot, HostRoot: hostRoot, Gates: gates.Set(c.Gates.Kubelet)})
	if err != nil {
		return nil, errors.Join(err, t.roots.Remove(root))
	}
	p.pod = &kubelet.Pod{Pod: res.Pod, PreservePermissions: res.PreservePermissions, Sources: c.Sources, Storage: storage(c.Storage)}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.tearDownHost(p))
			p = nil
		}
	}()
	if err := hostfix.Create(hostRoot, c.Host); err != nil {
		return p, err
	}
	results := map[string]kubelet.VolumeResult{}
	setUp := func() {
		for _, r := range p.k.SetUp(p.pod) {
			results[r.Name] = r
		}
	}
	setUp()
	kubeletGates := gates.Set(c.Gates.Kubelet)
	for i, s := range c.After {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		switch {
		case s.Chmod != nil:
			r, ok := results[s.Chmod.Volume]
			if !ok || r.Err != nil {
				return p, fmt.Errorf("after[%d].chmod: volume %q is not set up", i, s.Chmod.Volume)
			}
			// A container changing a mode acts on the same inode the node set up: chmod it here,
			// as root (the container's root has CAP_FOWNER).
			if err := os.Chmod(filepath.Join(r.Path, filepath.Clean("/"+s.Chmod.Path)), reference.FileMode(s.Chmod.Mode)); err != nil {
				return p, fmt.Errorf("after[%d].chmod: %w", i, err)
			}
		case s.SetGates != nil:
			kubeletGates = kubeletGates.Merge(s.SetGates.Kubelet)
			p.k.SetGates(kubeletGates)
		case s.RestartKubelet:
			setUp()
		}
	}
	mounts := volumeMounts(res.Pod)
	for _, v := range res.Pod.Spec.Volumes {
		r := results[v.Name]
		vo := framework.VolumeObservation{Name: v.Name, Type: r.Type, Medium: r.Medium, SetUp: framework.SetUpOK}
		if r.Err != nil {
			vo.SetUp = r.Err.Error()
		} else {
			m, ok := mounts[v.Name]
			if !ok {
				// A volume no container mounts is still observed: where the default probe
				// container would mount it (framework.Case.Complete).
				m = corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name}
			}
			inside := prefix + filepath.Clean("/"+m.MountPath)
			p.inside[v.Name] = inside
			p.binds = append(p.binds, bind{Source: r.Path, Target: inside, ReadOnly: m.ReadOnly || mustMountRO(v)})
			p.vols = append(p.vols, incontainer.Volume{Name: v.Name, Path: inside, Root: v.HostPath != nil})
		}
		p.obs.Volumes = append(p.obs.Volumes, vo)
	}
	return p, nil
}

// volumeMounts picks, per volume, the first volumeMount naming it across the pod's containers in
// order: the target runs one container per user set, not the pod's containers, so each volume
// is mounted once.
func volumeMounts(pod *corev1.Pod) map[string]corev1.VolumeMount {
	out := map[string]corev1.VolumeMount{}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if _, seen := out[m.Name]; !seen {
				out[m.Name] = m
			}
		}
	}
	return out
}

// mustMountRO is v1.37 kubelet makeMounts' `mustMountRO := vol.Mounter.GetAttributes().ReadOnly`:
// secret, configMap, downwardAPI and projected volumes are always mounted read-only; a
// flexVolume when its source says readOnly.
func mustMountRO(v corev1.Volume) bool {
	switch {
	case v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil, v.Projected != nil:
		return true
	case v.FlexVolume != nil:
		return v.FlexVolume.ReadOnly
	}
	return false
}

// tearDownHost is docs/spec.md step 8 on the host side.
func (t *Target) tearDownHost(p *prepared) error {
	return errors.Join(p.k.TearDown(p.pod), t.roots.Remove(p.root))
}

// Observe runs c (docs/spec.md "The order of events"): from its batch if Prepare set it up,
// otherwise with containers of its own, and tears down what it used.
func (t *Target) Observe(ctx context.Context, in *framework.Case) (*framework.Observation, error) {
	c := reference.CopyCase(in)
	c.Complete()
	res := reference.Admit(c)
	if !reachesNode(c, res) {
		obs := &framework.Observation{
			APIVersion: framework.ObservationVersion,
			Case:       c.Name,
			Source:     Name,
			Admission: framework.Admission{
				Allowed:             res.Allowed,
				Errors:              res.Errors,
				Dropped:             res.Dropped,
				PreservePermissions: res.PreservePermissions,
			},
		}
		obs.Normalize()
		return obs, nil
	}
	if ok, why := t.Supports(c); !ok {
		return nil, fmt.Errorf("case %q cannot run here: %s", c.Name, why)
	}

	t.mu.Lock()
	b := t.batch
	var p *prepared
	var perr error
	if b != nil {
		p, perr = b.cases[c.Name], b.errs[c.Name]
		delete(b.cases, c.Name)
		delete(b.errs, c.Name)
	}
	t.mu.Unlock()
	if perr != nil {
		return nil, perr
	}
	if p != nil {
		obs, err := t.observe(ctx, b, p)
		err = errors.Join(err, t.tearDownHost(p))
		if t.batchDone(b) {
			err = errors.Join(err, t.release(ctx))
		}
		if err != nil {
			return nil, err
		}
		return obs, nil
	}

	own, err := t.prepare(ctx, []*framework.Case{c}, false)
	if err != nil {
		return nil, err
	}
	if perr := own.errs[c.Name]; perr != nil {
		return nil, perr
	}
	p = own.cases[c.Name]
	delete(own.cases, c.Name)
	obs, err := t.observe(ctx, own, p)
	err = errors.Join(err, t.tearDownHost(p), t.releaseBatch(ctx, own))
	if err != nil {
		return nil, err
	}
	return obs, nil
}

// observe is steps 6 and 7 inside the containers: the snapshot as root, then the probes in
// order, consecutive probes of one user in one exec.
func (t *Target) observe(ctx context.Context, b *batch, p *prepared) (*framework.Observation, error) {
	t.mu.Lock()
	eng := t.eng
	t.mu.Unlock()
	obs := p.obs
	if len(p.vols) > 0 {
		snap, err := t.exec(ctx, eng, b, rootUser, incontainer.Request{Volumes: p.vols})
		if err != nil {
			return nil, err
		}
		paths := map[string][]framework.PathObservation{}
		for _, v := range snap.Volumes {
			paths[v.Name] = v.Paths
		}
		for i := range obs.Volumes {
			obs.Volumes[i].Paths = paths[obs.Volumes[i].Name]
		}
	}
	probes := p.c.Probes
	for i := 0; i < len(probes); {
		j := i
		var steps []probe.Step
		for ; j < len(probes) && userKey(probes[j].As) == userKey(probes[i].As); j++ {
			root, ok := p.inside[probes[j].Volume]
			if !ok {
				return nil, fmt.Errorf("probe %q: volume %q was not set up", probes[j].Name, probes[j].Volume)
			}
			steps = append(steps, probe.Step{Root: root, Probe: probes[j]})
		}
		ans, err := t.exec(ctx, eng, b, probes[i].As, incontainer.Request{Probes: steps})
		if err != nil {
			return nil, err
		}
		if len(ans.Probes) != len(steps) {
			return nil, fmt.Errorf("probe container answered %d probes for %d", len(ans.Probes), len(steps))
		}
		obs.Probes = append(obs.Probes, ans.Probes...)
		i = j
	}
	obs.Normalize()
	return obs, nil
}

func (t *Target) exec(ctx context.Context, eng *engine, b *batch, u framework.User, req incontainer.Request) (*framework.Observation, error) {
	id, ok := b.containers[userKey(u)]
	if !ok {
		return nil, fmt.Errorf("no probe container for uid %d gid %d groups %v", u.UID, u.GID, u.Groups)
	}
	t.mu.Lock()
	t.stats.Execs++
	t.mu.Unlock()
	return eng.probe(ctx, id, req)
}

// batchDone reports whether b is the current batch and every case of it was observed.
func (t *Target) batchDone(b *batch) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.batch == b && len(b.cases) == 0 && len(b.errs) == 0
}

// release tears down what the current batch still holds: cases never observed, then its
// containers.
func (t *Target) release(ctx context.Context) error {
	t.mu.Lock()
	b := t.batch
	t.batch = nil
	t.mu.Unlock()
	if b == nil {
		return nil
	}
	return t.releaseBatch(ctx, b)
}

func (t *Target) releaseBatch(ctx context.Context, b *batch) error {
	var errs []error
	for name, p := range b.cases {
		errs = append(errs, t.tearDownHost(p))
		delete(b.cases, name)
	}
	t.mu.Lock()
	eng := t.eng
	t.mu.Unlock()
	for key, id := range b.containers {
		errs = append(errs, eng.remove(ctx, id))
		delete(b.containers, key)
	}
	return errors.Join(errs...)
}

// Close releases the current batch, removes every container this run started (also those a
// cancelled start left) and every case root left behind.
func (t *Target) Close() error {
	ctx := context.Background()
	errs := []error{t.release(ctx)}
	t.mu.Lock()
	eng := t.eng
	t.eng, t.connected = nil, false
	t.mu.Unlock()
	if eng != nil {
		errs = append(errs, eng.removeAll(ctx), eng.cli.Close())
	}
	errs = append(errs, t.roots.RemoveAll())
	return errors.Join(errs...)
}

func storage(in map[string][]framework.File) map[string][]flexvolume.StorageFile {
	out := map[string][]flexvolume.StorageFile{}
	for vol, files := range in {
		for _, f := range files {
			out[vol] = append(out[vol], flexvolume.StorageFile{Path: f.Path, Dir: f.Dir, Symlink: f.Symlink, Mode: f.Mode, UID: f.UID, GID: f.GID})
		}
	}
	return out
}
