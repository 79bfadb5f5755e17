package container

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
	"github.com/volperm/volperm/framework/refnode"
)

// prepared is one case whose host side is set up, waiting for its snapshot and probes.
type prepared struct {
	c *framework.Case
	// index is the case's place in the batch.
	index int
	// obs holds the volumes and probe results observed so far.
	obs  *framework.Observation
	root string
	pod  *refnode.Pod // nil until the reference kubelet runs
	// vols are the volumes set up, with where the containers see them.
	vols  []incontainer.Volume
	binds []bind
	// inside maps a volume name to its path inside the containers.
	inside map[string]string
	// err is why the case cannot be observed although the batch runs (a probe of a volume
	// whose set-up failed, like the reference target).
	err error
}

// rootUser is the user the snapshot runs as: root reads every directory, like the kubelet's stat.
var rootUser = framework.User{UID: 0, GID: 0}

// maxRequest bounds one exec's request: it travels as one argument (Linux MAX_ARG_STRLEN is 128 KiB).
const maxRequest = 64 << 10

// run runs cases (admitted, reaching a node, supported) from set-up to teardown, sharing one
// container per distinct user set. With prefixed, case i's mounts live under /case-i; otherwise
// (one case) at the pod's own mount paths. A case that fails on the host side gets its error;
// err is the target failing for all of them. Everything is torn down and removed on return.
// The results are in the order of cases.
func (n *node) run(ctx context.Context, cases []framework.NodeCase, prefixed bool) (out []framework.NodeResult, err error) {
	eng, err := n.engine(ctx)
	if err != nil {
		return nil, err
	}
	out = make([]framework.NodeResult, len(cases))
	var ps []*prepared
	containers := map[string]string{}
	defer func() {
		var errs []error
		for _, p := range ps {
			errs = append(errs, n.tearDownHost(p))
		}
		for _, id := range containers {
			errs = append(errs, eng.remove(ctx, id)) // one at a time (engine.removing)
		}
		if e := errors.Join(errs...); e != nil {
			out, err = nil, errors.Join(err, e)
		}
	}()

	users := map[string]framework.User{userKey(rootUser): rootUser}
	var binds []bind
	for i, nc := range cases {
		c := nc.Case
		prefix := ""
		if prefixed {
			prefix = "/case-" + strconv.Itoa(i)
		}
		p, err := n.setUpHost(ctx, nc, prefix)
		if err != nil {
			out[i].Err = err
			continue
		}
		p.index = i
		ps = append(ps, p)
		binds = append(binds, p.binds...)
		for _, pr := range c.Probes {
			users[userKey(pr.As)] = pr.As
		}
	}
	if len(ps) == 0 {
		return out, nil
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
		containers[s.key] = s.id
		n.count(func(s *Stats) { s.ContainerStarts++ })
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	if err := n.snapshot(ctx, eng, containers[userKey(rootUser)], ps); err != nil {
		return nil, err
	}
	if err := n.probes(ctx, eng, containers, ps); err != nil {
		return nil, err
	}
	for _, p := range ps {
		out[p.index] = framework.NodeResultOf(p.obs, p.err)
	}
	return out, nil
}

// snapshot is docs/spec.md step 6 for every case at once, from inside the root container, in as
// few execs as the argument size allows (lifecycle.RequestAll).
func (n *node) snapshot(ctx context.Context, eng *engine, id string, ps []*prepared) error {
	var into []*framework.VolumeObservation
	var req incontainer.Request
	for _, p := range ps {
		for _, v := range p.vols {
			for j := range p.obs.Volumes {
				if p.obs.Volumes[j].Name == v.Name {
					into = append(into, &p.obs.Volumes[j])
					// Volume names repeat across cases: the request names each by its index.
					req.Volumes = append(req.Volumes, incontainer.Volume{Name: strconv.Itoa(len(req.Volumes)), Path: v.Path, Root: v.Root})
				}
			}
		}
	}
	ans, err := lifecycle.RequestAll(ctx, n.inside(eng, id), req, maxRequest)
	if err != nil {
		return err
	}
	for i, v := range ans.Volumes {
		into[i].Paths = v.Paths
	}
	return nil
}

// segment is a run of consecutive probes of one case by one user.
type segment struct {
	p     *prepared
	user  framework.User
	steps []probe.Step
}

// probes is docs/spec.md step 7 for every case. A case's probes split into segments of one user;
// phase k runs the k-th segment of every case, one exec per user (all cases' steps in it), the
// users' execs concurrently. Each case keeps its order; cases never share a volume, so running
// them side by side changes nothing.
func (n *node) probes(ctx context.Context, eng *engine, containers map[string]string, ps []*prepared) error {
	var phases [][]segment
	for _, p := range ps {
		segs, err := segments(p)
		if err != nil {
			p.err = err
			continue
		}
		for k, seg := range segs {
			if k == len(phases) {
				phases = append(phases, nil)
			}
			phases[k] = append(phases[k], seg)
		}
	}
	for _, phase := range phases {
		byUser := map[string][]segment{}
		for _, s := range phase {
			byUser[userKey(s.user)] = append(byUser[userKey(s.user)], s)
		}
		ch := make(chan error, len(byUser))
		for key, segs := range byUser {
			go func() { ch <- n.runSegments(ctx, eng, containers[key], segs) }()
		}
		var errs []error
		for range byUser {
			errs = append(errs, <-ch)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// segments splits p's probes into runs of one user.
func segments(p *prepared) ([]segment, error) {
	var out []segment
	probes := p.c.Probes
	for i := 0; i < len(probes); {
		seg := segment{p: p, user: probes[i].As}
		for ; i < len(probes) && userKey(probes[i].As) == userKey(seg.user); i++ {
			root, ok := p.inside[probes[i].Volume]
			if !ok {
				return nil, fmt.Errorf("probe %q: volume %q was not set up", probes[i].Name, probes[i].Volume)
			}
			seg.steps = append(seg.steps, probe.Step{Root: root, Probe: probes[i]})
		}
		out = append(out, seg)
	}
	return out, nil
}

// runSegments runs segs (one user, distinct cases) in container id, in as few execs as the
// argument size allows (lifecycle.RequestAll), and appends each case's results to its
// Observation.
func (n *node) runSegments(ctx context.Context, eng *engine, id string, segs []segment) error {
	var req incontainer.Request
	for _, s := range segs {
		req.Probes = append(req.Probes, s.steps...)
	}
	ans, err := lifecycle.RequestAll(ctx, n.inside(eng, id), req, maxRequest)
	if err != nil {
		return err
	}
	for _, s := range segs {
		s.p.obs.Probes = append(s.p.obs.Probes, ans.Probes[:len(s.steps)]...)
		ans.Probes = ans.Probes[len(s.steps):]
	}
	return nil
}

// inside is container id seen through docker exec of the probe binary (lifecycle.Inside), each
// request one exec of the batch's (Stats.Execs).
func (n *node) inside(eng *engine, id string) lifecycle.Inside {
	in := eng.inside(id)
	return insideFunc(func(ctx context.Context, req incontainer.Request) (*framework.Observation, error) {
		if id == "" {
			return nil, errors.New("no probe container for this user")
		}
		n.count(func(s *Stats) { s.Execs++ })
		return in.Request(ctx, req)
	})
}

// insideFunc is a function as a lifecycle.Inside.
type insideFunc func(context.Context, incontainer.Request) (*framework.Observation, error)

func (f insideFunc) Request(ctx context.Context, req incontainer.Request) (*framework.Observation, error) {
	return f(ctx, req)
}

// setUpHost runs docs/spec.md steps 3-5 for the admitted case on the reference node under a new case root
// (framework/lifecycle Steps: a container changing a mode acts on the same inode the node set
// up, so chmod runs here, as root, whose container has CAP_FOWNER) and plans its mounts.
func (n *node) setUpHost(ctx context.Context, nc framework.NodeCase, prefix string) (p *prepared, err error) {
	c, res := nc.Case, nc.Admitted
	root, err := n.roots.Make("volperm-ctr-")
	if err != nil {
		return nil, err
	}
	p = &prepared{c: c, root: root, inside: map[string]string{}, obs: &framework.Observation{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.tearDownHost(p))
			p = nil
		}
	}()
	if p.pod, err = refnode.NewPod(root, c, res); err != nil {
		return p, err
	}
	set, err := lifecycle.Steps(ctx, c, p.pod)
	if err != nil {
		return p, err
	}
	mounts := volumeMounts(res.Pod)
	p.obs.Volumes = lifecycle.Observations(res.Pod, set)
	// docs/spec.md [mounts.recursive-read-only]: the kubelet's status of each readOnly mount
	// (recursive never: SupportsNode leaves such cases out).
	for i := range p.obs.Volumes {
		p.obs.Volumes[i].RecursiveReadOnly = framework.RecursiveReadOnlyStatus(res.Pod, p.obs.Volumes[i].Name, !c.Lacks(framework.RuntimeRecursiveReadOnlyMounts))
	}
	for _, v := range res.Pod.Spec.Volumes {
		if set[v.Name].Err != "" {
			continue
		}
		m, ok := mounts[v.Name]
		if !ok {
			// A volume no container mounts is still observed: where the default probe
			// container would mount it (framework.Case.Complete).
			m = corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name}
		}
		inside := prefix + filepath.Clean("/"+m.MountPath)
		p.inside[v.Name] = inside
		p.binds = append(p.binds, bind{Source: set[v.Name].Path, Target: inside, ReadOnly: framework.ReadOnlyMount(res.Pod, v)})
		p.vols = append(p.vols, incontainer.Volume{Name: v.Name, Path: inside, Root: v.HostPath != nil})
	}
	return p, nil
}

// volumeMounts picks, per volume, the first volumeMount naming it across the pod's containers in
// order: the target runs one container per user set, not the pod's containers, so each volume
// is mounted once. A volume whose mount path lies below another's is mounted at
// /volumes/NAME instead, so that the outer volume shows the mount point the kubelet made for it
// (docs/spec.md [atomicwriter.nested]), not the inner volume over it.
func volumeMounts(pod *corev1.Pod) map[string]corev1.VolumeMount {
	out := map[string]corev1.VolumeMount{}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if _, seen := out[m.Name]; !seen {
				out[m.Name] = m
			}
		}
	}
	for name, m := range out {
		for other, o := range out {
			if other != name && strings.HasPrefix(filepath.Clean(m.MountPath), filepath.Clean(o.MountPath)+"/") {
				m.MountPath = "/volumes/" + name
				out[name] = m
				break
			}
		}
	}
	return out
}

// tearDownHost is docs/spec.md step 8 on the host side.
func (n *node) tearDownHost(p *prepared) error {
	var err error
	if p.pod != nil {
		err = p.pod.TearDown(context.Background())
	}
	return errors.Join(err, n.roots.Remove(p.root))
}
