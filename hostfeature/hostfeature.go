// Package hostfeature is volperm's one place that knows which features of this machine a test or
// a case needs (root, hugetlbfs, a huge page size, the hugetlb cgroup, CAP_SYS_RESOURCE, a cgroup
// version, a container engine), whether the machine has them, and whether this run requires
// them. A missing feature makes a case "not run" (a test: skipped) with a reason that names the
// feature and how to get it; a required one makes it a failure instead (docs/host-features.md).
package hostfeature

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Feature names one feature of the machine, as VOLPERM_REQUIRE and the reasons spell it.
type Feature string

const (
	// Root: uid 0 (mounts, chown, mknod, probes as other uids).
	Root Feature = "root"
	// Hugetlbfs: the kernel lists hugetlbfs in /proc/filesystems.
	Hugetlbfs Feature = "hugetlbfs"
	// HugetlbCgroup: the hugetlb cgroup controller (a kubelet accounts huge pages with it).
	HugetlbCgroup Feature = "hugetlb-cgroup"
	// SysResource: CAP_SYS_RESOURCE in the capability bounding set (runc's default set has it).
	SysResource Feature = "cap-sys-resource"
	// CgroupV1 and CgroupV2: the cgroup hierarchy mounted at /sys/fs/cgroup.
	CgroupV1 Feature = "cgroup-v1"
	CgroupV2 Feature = "cgroup-v2"
	// ContainerEngine: a Docker engine answering on DOCKER_HOST or /var/run/docker.sock.
	ContainerEngine Feature = "container-engine"
	// MountSetattr: the mount_setattr system call (Linux 5.12), with which the exec target makes
	// an agent's mount namespace read-only but its work dir (framework/sandbox).
	MountSetattr Feature = "mount-setattr"
	// ProtectedSymlinks: fs.protected_symlinks=1, which systemd sets on every kubelet host (the
	// kernel's own default is 0); docs/spec.md [probes.protected-symlinks] assumes it.
	ProtectedSymlinks Feature = "protected-symlinks"
)

// protectedSymlinksFile holds the kernel's fs.protected_symlinks.
const protectedSymlinksFile = "/proc/sys/fs/protected_symlinks"

// hugePagesPrefix opens the name of a huge page size's feature: "hugepages-2Mi".
const hugePagesPrefix = "hugepages-"

// HugePages is the feature "the kernel offers huge pages of size": hugepages-2Mi, hugepages-1Gi.
func HugePages(size resource.Quantity) Feature {
	return Feature(hugePagesPrefix + size.String())
}

// Environment variables that decide what a run requires.
const (
	// EnvRequire lists what this run requires, comma-separated: feature names
	// (hugepages-1Gi, container-engine, ...), "hugepages" (every huge page size), "cases" (every
	// selected case must run on the target) or "all". "container" is an old name of
	// container-engine.
	EnvRequire = "VOLPERM_REQUIRE"
	// EnvCI is set to "true" by CI systems: it requires "cases" and what CI's own script
	// installs (ciProvides).
	EnvCI = "CI"
)

// ciProvides are the features .ci/run provides on any machine (it runs as root and starts a
// Docker engine through hack/docker-up.sh). What the kernel or the machine's sandbox decides (a
// huge page size, hugetlbfs, the hugetlb cgroup, CAP_SYS_RESOURCE, a cgroup version) is not
// required by CI=true, so CI stays green on any Linux host; name it in VOLPERM_REQUIRE on a host
// that must have it.
var ciProvides = map[Feature]bool{Root: true, ContainerEngine: true, ProtectedSymlinks: true}

// Required reports whether this run requires f: a missing required feature fails the case or
// test instead of skipping it.
func Required(f Feature) bool {
	if os.Getenv(EnvCI) == "true" && ciProvides[f] {
		return true
	}
	for _, n := range requireList() {
		switch {
		case n == "all", Feature(n) == f:
			return true
		case n == "container" && f == ContainerEngine:
			return true
		case n == "hugepages" && strings.HasPrefix(string(f), hugePagesPrefix):
			return true
		}
	}
	return false
}

// RequireCases reports whether every selected case must run on the target: a case the target
// cannot run (for a reason other than a missing feature of this machine) is then a failure.
func RequireCases() bool {
	if os.Getenv(EnvCI) == "true" {
		return true
	}
	for _, n := range requireList() {
		if n == "all" || n == "cases" {
			return true
		}
	}
	return false
}

func requireList() []string {
	var out []string
	for _, n := range strings.Split(os.Getenv(EnvRequire), ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// CheckRequireList returns an error naming the first entry of VOLPERM_REQUIRE that is neither a
// feature nor one of the words it takes, so that a typo is not silently "nothing required".
func CheckRequireList() error {
	for _, n := range requireList() {
		switch {
		case n == "all", n == "cases", n == "container", n == "hugepages":
		case strings.HasPrefix(n, hugePagesPrefix):
			if _, err := resource.ParseQuantity(strings.TrimPrefix(n, hugePagesPrefix)); err != nil {
				return fmt.Errorf("%s: %q is not a huge page size: write hugepages-2Mi or hugepages-1Gi", EnvRequire, n)
			}
		case known[Feature(n)]:
		default:
			return fmt.Errorf("%s: unknown entry %q: use cases, all, hugepages, hugepages-<size> or one of %s", EnvRequire, n, strings.Join(knownNames(), ", "))
		}
	}
	return nil
}

var known = map[Feature]bool{Root: true, Hugetlbfs: true, HugetlbCgroup: true, SysResource: true, CgroupV1: true, CgroupV2: true, ContainerEngine: true, MountSetattr: true, ProtectedSymlinks: true}

func knownNames() []string {
	var out []string
	for f := range known {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// Missing says that this machine lacks Feature: Why is what was found, How what to do.
type Missing struct {
	Feature Feature
	Why     string
	How     string
}

// Error reads "this machine lacks hugepages-1Gi: <why>; <how>".
func (m *Missing) Error() string {
	return fmt.Sprintf("this machine lacks %s: %s; %s", m.Feature, m.Why, m.How)
}

// Check returns nil when this machine has f, else what is missing and how to get it.
func Check(f Feature) *Missing {
	if s, ok := strings.CutPrefix(string(f), hugePagesPrefix); ok {
		return checkHugePages(f, s)
	}
	switch f {
	case Root:
		if os.Geteuid() != 0 {
			return &Missing{f, fmt.Sprintf("this process runs as uid %d", os.Geteuid()), "run as root (sudo)"}
		}
	case Hugetlbfs:
		if !kernelHas("hugetlbfs") {
			return &Missing{f, "the kernel does not list hugetlbfs in /proc/filesystems", "use a kernel built with CONFIG_HUGETLBFS"}
		}
	case HugetlbCgroup:
		if !hasHugetlbCgroup() {
			return &Missing{f, "no hugetlb controller in /sys/fs/cgroup/cgroup.controllers or /proc/cgroups", "use a kernel built with CONFIG_CGROUP_HUGETLB and enable the controller"}
		}
	case SysResource:
		if !hasCapability(unix.CAP_SYS_RESOURCE) {
			return &Missing{f, "CAP_SYS_RESOURCE is not in this process's bounding set (/proc/self/status CapBnd)", "run outside a sandbox that drops it; hack/docker-up.sh gives dockerd a runc wrapper that works without it"}
		}
	case CgroupV1, CgroupV2:
		v := cgroupVersion()
		if (f == CgroupV2) != (v == 2) {
			return &Missing{f, fmt.Sprintf("/sys/fs/cgroup is cgroup v%d", v), "boot with the other hierarchy (systemd.unified_cgroup_hierarchy=1 for v2, =0 for v1)"}
		}
	case MountSetattr:
		// Invalid arguments on purpose: a kernel with the call says EBADF or EINVAL, one
		// without it ENOSYS, and nothing changes either way.
		if err := unix.MountSetattr(-1, "", 0, &unix.MountAttr{}); errors.Is(err, unix.ENOSYS) {
			return &Missing{f, "the kernel (" + KernelRelease() + ") has no mount_setattr system call", "use Linux 5.12 or later, or set VOLPERM_AGENT_SANDBOX=off to run exec agents unsandboxed"}
		}
	case ProtectedSymlinks:
		raw, err := os.ReadFile(protectedSymlinksFile)
		if v := strings.TrimSpace(string(raw)); err != nil || v != "1" {
			why := "fs.protected_symlinks is " + v + " here"
			if err != nil {
				why = "cannot read " + protectedSymlinksFile + ": " + err.Error()
			}
			return &Missing{f, why, "set it as systemd does on every kubelet host: sysctl -w fs.protected_symlinks=1"}
		}
	case ContainerEngine:
		if err := pingEngine(); err != nil {
			return &Missing{f, err.Error(), "run hack/docker-up.sh (installs Debian's docker.io and starts dockerd)"}
		}
	default:
		return &Missing{f, "volperm does not know this feature", "name one of " + strings.Join(knownNames(), ", ")}
	}
	return nil
}

// First returns the first of fs this machine lacks, nil when it has them all.
func First(fs []Feature) *Missing {
	for _, f := range fs {
		if m := Check(f); m != nil {
			return m
		}
	}
	return nil
}

// Need skips t when this machine lacks one of fs, naming the feature and how to get it, or fails
// it when the run requires that feature (Required).
func Need(t testing.TB, fs ...Feature) {
	t.Helper()
	m := First(fs)
	if m == nil {
		return
	}
	if Required(m.Feature) {
		t.Fatalf("%v (required here: %s=true or %s names it)", m, EnvCI, EnvRequire)
	}
	t.Skip(m.Error())
}

// HugePageSizes lists the huge page sizes the kernel offers (/sys/kernel/mm/hugepages), smallest
// first.
func HugePageSizes() []resource.Quantity {
	entries, err := os.ReadDir(sysHugePages)
	if err != nil {
		return nil
	}
	var sizes []int64
	for _, e := range entries {
		// "hugepages-2048kB"
		kb, ok := strings.CutSuffix(strings.TrimPrefix(e.Name(), "hugepages-"), "kB")
		if n, err := strconv.ParseInt(kb, 10, 64); ok && err == nil {
			sizes = append(sizes, n*1024)
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	out := make([]resource.Quantity, len(sizes))
	for i, s := range sizes {
		out[i] = *resource.NewQuantity(s, resource.BinarySI)
	}
	return out
}

var sysHugePages = "/sys/kernel/mm/hugepages"

func checkHugePages(f Feature, size string) *Missing {
	if m := Check(Hugetlbfs); m != nil {
		return &Missing{f, m.Why, m.How}
	}
	want, err := resource.ParseQuantity(size)
	if err != nil {
		return &Missing{f, fmt.Sprintf("%q is not a huge page size", size), "write a size such as 2Mi or 1Gi"}
	}
	var have []string
	for _, s := range HugePageSizes() {
		if s.Cmp(want) == 0 {
			return nil
		}
		have = append(have, s.String())
	}
	offered := "none"
	if len(have) > 0 {
		offered = strings.Join(have, ", ")
	}
	return &Missing{f, fmt.Sprintf("the kernel offers no %s huge pages (%s lists %s)", want.String(), sysHugePages, offered),
		fmt.Sprintf("use a machine whose CPU and kernel support %s pages (on x86, boot with hugepagesz=1G for 1Gi)", want.String())}
}

func kernelHas(fs string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == fs {
			return true
		}
	}
	return false
}

func cgroupVersion() int {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return 2
	}
	return 1
}

func hasHugetlbCgroup() bool {
	if cgroupVersion() == 2 {
		b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
		return err == nil && contains(strings.Fields(string(b)), "hugetlb")
	}
	// /proc/cgroups: "#subsys_name hierarchy num_cgroups enabled".
	f, err := os.Open("/proc/cgroups")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) == 4 && fl[0] == "hugetlb" && fl[3] == "1" {
			_, err := os.Stat(filepath.Join("/sys/fs/cgroup", "hugetlb"))
			return err == nil
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// hasCapability reads the bounding set from /proc/self/status (CapBnd, hex).
func hasCapability(c int) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n>>uint(c)&1 == 1
		}
	}
	return false
}

var (
	engineMu sync.Mutex
	// engineErrs is ping's answer per DOCKER_HOST: a process that changes it (a test pointing at
	// a socket nobody serves) asks again.
	engineErrs = map[string]error{}
)

// pingEngine asks the Docker engine's /_ping once per process and DOCKER_HOST (2 s at most).
func pingEngine() error {
	engineMu.Lock()
	defer engineMu.Unlock()
	host := os.Getenv("DOCKER_HOST")
	err, asked := engineErrs[host]
	if !asked {
		err = ping()
		engineErrs[host] = err
	}
	return err
}

// EngineSocket is the unix socket a Docker engine answers on: DOCKER_HOST's when it names one,
// else /var/run/docker.sock.
func EngineSocket() (string, error) {
	h := os.Getenv("DOCKER_HOST")
	if h == "" {
		return "/var/run/docker.sock", nil
	}
	if p, ok := strings.CutPrefix(h, "unix://"); ok {
		return p, nil
	}
	return "", fmt.Errorf("DOCKER_HOST=%s is not a unix socket", h)
}

func ping() error {
	sock, err := EngineSocket()
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	resp, err := c.Get("http://engine/_ping")
	if err != nil {
		return fmt.Errorf("no Docker engine answers on %s (%v)", sock, unwrapDial(err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the Docker engine on %s answers /_ping with %s", sock, resp.Status)
	}
	return nil
}

func unwrapDial(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// KernelRelease is uname -r, for reports ("unknown" when uname fails).
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
