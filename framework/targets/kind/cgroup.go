package kind

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework/needs"
)

// On a cgroup v1 host a node whose runc is 1.1.8 or later, driven through systemd, fails a
// container whose cgroup it cannot freeze within about 2 s while systemd applies its device
// rules ("unable to freeze", runc PR #3804): under load, probe pods never start. runc's cgroupfs
// manager writes the device rules itself and freezes nothing, so on such a host a node of
// containerd 2 runs with the cgroupfs driver: containerd's runc option SystemdCgroup = false,
// and the kubelet follows, since containerd 2 reports its driver through the CRI
// (KubeletCgroupDriverFromCRI, GA since v1.34: cmd/kubelet/app/server.go getCgroupDriverFromCRI). A
// containerd 1.x node answers no RuntimeConfig: its kubelet keeps kind's systemd driver, so
// its containerd must keep it too, and is left as it is. docs/kind.md "The container runtime".

// cgroupfsPatch is the containerd configuration patch (kind's config.toml is version 2, which
// containerd 2 migrates) that makes runc use cgroupfs, for both of kind's runtime handlers: the
// kubelet has one driver for every pod.
const cgroupfsPatch = `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
  SystemdCgroup = false`

// hostCgroupV1 says whether this host's /sys/fs/cgroup is cgroup v1 (not the unified v2).
func hostCgroupV1() bool {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false
	}
	return st.Type != unix.CGROUP2_SUPER_MAGIC
}

var containerdMajor = regexp.MustCompile(`containerd \S+ v?(\d+)\.`)

// nodeContainerdMajor is the major version of the containerd in node image image ("containerd
// github.com/containerd/containerd/v2 v2.4.2 …" is 2).
func nodeContainerdMajor(ctx context.Context, image string) (int, error) {
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "none", "--entrypoint", "containerd", image, "--version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("containerd --version in %s: %v: %s", image, err, strings.TrimSpace(string(out)))
	}
	m := containerdMajor.FindStringSubmatch(string(out))
	if m == nil {
		return 0, fmt.Errorf("containerd --version in %s: no version in %q", image, strings.TrimSpace(string(out)))
	}
	return strconv.Atoi(m[1])
}

// withCgroupfs adds cgroupfsPatch to a kind config's containerdConfigPatches.
func withCgroupfs(raw []byte) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	patches, _ := cfg["containerdConfigPatches"].([]any)
	cfg["containerdConfigPatches"] = append(patches, cgroupfsPatch)
	return yaml.Marshal(cfg)
}

// containerd is the major version of the node image's containerd, read once (a docker run of
// the image); with it the target decides once whether its nodes need withCgroupfs on this host
// (t.cgroupfs), and logs it.
func (t *Target) containerd(ctx context.Context) (int, error) {
	t.runtimeOnce.Do(func() {
		t.containerdMajor, t.runtimeErr = nodeContainerdMajor(ctx, t.opts.NodeImage)
		t.cgroupfs = t.runtimeErr == nil && t.containerdMajor >= 2 && hostCgroupV1()
		if t.cgroupfs {
			t.logf("this host runs cgroup v1 and the node image containerd %d: the nodes use the cgroupfs driver (runc under systemd cannot always freeze a container here; docs/kind.md)", t.containerdMajor)
		}
	})
	return t.containerdMajor, t.runtimeErr
}

// cgroupfsNeeded says whether clusters of the target's node image need withCgroupfs on this
// host.
func (t *Target) cgroupfsNeeded(ctx context.Context) (bool, error) {
	if !hostCgroupV1() {
		return false, nil
	}
	_, err := t.containerd(ctx)
	return t.cgroupfs, err
}

// nodeNeeds are the needs of framework/needs' table that the node image meets beyond a stock
// node: control of its kubelet, and the runtime capabilities containerd 2 has
// (needs.Capabilities; the cluster's status decides once it exists, framework/cluster
// runtime.go), or none of them with containerd 1.6 (--runtime debian: docs/spec.md
// [userns.runtime], [mounts.recursive-read-only]).
func (t *Target) nodeNeeds() []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	major, err := t.containerd(ctx)
	if err != nil {
		return nil
	}
	// kind's nodes are volperm's: it restarts their kubelets and flips their gates.
	return append(needs.Met(func(c needs.Capability) bool { return major >= 2 && c.Containerd2 }), needs.NodeControl)
}
