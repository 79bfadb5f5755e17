// Package nodeimage builds volperm's kind node image offline, from source and Debian packages:
// the Kubernetes commands of a release, etcd, a pause binary and the container runtime
// (containerd and runc, build/runtime; or Debian's packages, Options.Runtime) compiled here, a
// debootstrap rootfs with kind's base image files, the control-plane images preloaded into the
// node's containerd. Every step keeps its artifact in a cache directory (or in Docker, by tag) and is
// skipped when the inputs it was made from are unchanged. The default release (KubernetesVersion)
// is built in build/kindnode; another supported one (Options.Release) in a module generated for
// it (release.go), with the etcd and pause tags its kubeadm asks for.
package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/k8srelease"
)

// KubernetesVersion is the release of the default node image: the newest patch release of
// framework's release table. It must match build/kindnode/go.mod (a test checks).
var KubernetesVersion = framework.NewestPatch

// Versions of what else the image holds. The etcd and pause tags are the ones the release's
// kubeadm lists (kubeadmImages).
const (
	// KindVersion is the sigs.k8s.io/kind module whose images/base/files the node image uses.
	KindVersion = "v0.33.0"
	// Suite is the Debian release of the rootfs.
	Suite = "bookworm"
)

// Packages are the Debian packages of the node rootfs: kind's base image list
// (images/base/Dockerfile) minus fuse-overlayfs, nfs, iscsi and curl, plus containerd, runc and
// the CNI plugins that kind builds from source. The runtime "containerd2" leaves out
// DebianRuntimePackages (its containerd and runc are built here; libseccomp2, which runc links,
// stays).
var Packages = []string{
	"systemd", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux",
	"mount", "kmod", "libseccomp2", "pigz", "bash", "ca-certificates", "procps", "containerd",
	"runc", "containernetworking-plugins", "socat", "e2fsprogs",
	// jq: kind's /kind/bin/mount-product-files.sh, the createContainer hook of every container.
	"jq",
}

// Options configure Build.
type Options struct {
	// CacheDir holds the artifacts ("" = $XDG_CACHE_HOME/volperm/kindnode, else ~/.cache/volperm/kindnode).
	CacheDir string
	// ModuleDir is build/kindnode ("" = found from the working directory upwards).
	ModuleDir string
	// Mirror is the Debian mirror for debootstrap ("" = http://deb.debian.org/debian).
	Mirror string
	// Preload are further Docker images (e.g. the probe image) to put into the node's containerd.
	Preload []string
	// Log receives one progress line per step event (nil = os.Stderr).
	Log io.Writer
	// Release is the Kubernetes release of the node ("" = KubernetesVersion): any release
	// k8srelease.CheckRelease accepts; cached per release.
	Release string
	// Runtime is the node's container runtime ("" = DefaultRuntime): one of Runtimes. The
	// image's tag names it; one runtime build serves every release.
	Runtime string
}

// The container runtimes a node image can have (Options.Runtime).
const (
	// RuntimeContainerd2 is containerd ContainerdVersion (containerd, its runc shim and ctr)
	// and runc RuncVersion (with seccomp), compiled here from the Go module proxy in the modules
	// build/runtime/containerd and build/runtime/runc: a runtime that reports the runtime handler
	// features (user namespaces, recursive read-only mounts) and supplementalGroupsPolicy to
	// the kubelet.
	RuntimeContainerd2 = "containerd2"
	// RuntimeDebian is bookworm's containerd 1.6.20 and runc 1.1.5 (DebianRuntimePackages): a
	// runtime that reports none of those features (a kubelet refuses hostUsers: false pods,
	// reports no recursive read-only mounts and no supplementalGroupsPolicy).
	RuntimeDebian = "debian"
	// DefaultRuntime is the runtime of a node image when Options.Runtime is empty: a current
	// runtime, as v1.37 nodes run. On a cgroup v1 host its runc, driven through systemd, cannot
	// always freeze a container under load ("unable to freeze", runc PR #3804); the kind target
	// gives such nodes the cgroupfs driver (framework/targets/kind/cgroup.go, docs/kind.md).
	DefaultRuntime = RuntimeContainerd2
)

// Runtimes are the values of Options.Runtime, the default first.
var Runtimes = []string{RuntimeContainerd2, RuntimeDebian}

// Versions of RuntimeContainerd2; they must match build/runtime/*/go.mod (a test checks).
const (
	ContainerdVersion = "v2.4.2"
	RuncVersion       = "v1.5.2"
)

// DebianRuntimePackages are the Debian packages of RuntimeDebian, in Packages.
var DebianRuntimePackages = []string{"containerd", "runc"}

// CheckRuntime says whether r is one of Runtimes ("" is DefaultRuntime).
func CheckRuntime(r string) error {
	if r == "" || slices.Contains(Runtimes, r) {
		return nil
	}
	return fmt.Errorf("unknown container runtime %q: want one of %s", r, strings.Join(Runtimes, ", "))
}

// StepTiming is how long one step took and whether its cached artifact was used.
type StepTiming struct {
	Step     string        `json:"step"`
	Cached   bool          `json:"cached"`
	Duration time.Duration `json:"duration"`
}

// Result is the built image.
type Result struct {
	// Image is the node image tag, for kind's `image:` or --image.
	Image   string       `json:"image"`
	Timings []StepTiming `json:"timings"`
}

// builder carries one Build's state from step to step.
type builder struct {
	opts    Options
	cache   string
	module  string // build/kindnode: pause, and the default release's commands and etcd
	release string
	runtime string
	// rootfsDir is the runtime's rootfs in the cache; runtimeDir holds the runtime's binaries
	// (RuntimeContainerd2).
	rootfsDir, runtimeDir string
	// kubeModule is the module the release's commands are built in, kubeDir where they go.
	kubeModule, kubeDir string
	// etcdTag and pauseTag are the tags the release's kubeadm pulls; etcdDir holds etcd.
	etcdTag, pauseTag, etcdDir string
	goVersion                  string
	kindDir                    string
	keys                       map[string]string
	result                     Result
	steps                      int
	current                    int
}

// DefaultCacheDir is where artifacts go when Options.CacheDir is empty (framework.CacheDir).
func DefaultCacheDir() (string, error) { return framework.CacheDir("kindnode") }

// FindModuleDir looks for build/kindnode/go.mod from dir upwards.
func FindModuleDir(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		m := filepath.Join(d, "build", "kindnode")
		if _, err := os.Stat(filepath.Join(m, "go.mod")); err == nil {
			return m, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("build/kindnode/go.mod not found in %s or any parent", dir)
		}
	}
}

// Build makes the node image, reusing every artifact whose inputs are unchanged.
func Build(ctx context.Context, opts Options) (*Result, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.Mirror == "" {
		opts.Mirror = "http://deb.debian.org/debian"
	}
	b := &builder{opts: opts, keys: map[string]string{}, release: opts.Release}
	if b.release == "" {
		b.release = KubernetesVersion
	}
	if err := k8srelease.CheckRelease(b.release); err != nil {
		return nil, fmt.Errorf("node image: %w", err)
	}
	if b.runtime = opts.Runtime; b.runtime == "" {
		b.runtime = DefaultRuntime
	}
	if err := CheckRuntime(b.runtime); err != nil {
		return nil, fmt.Errorf("node image: %w", err)
	}
	var err error
	if b.cache = opts.CacheDir; b.cache == "" {
		if b.cache, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(b.cache, 0o755); err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	unlock, err := lockBuilds(ctx, b.cache, b.logf)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if b.module = opts.ModuleDir; b.module == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if b.module, err = FindModuleDir(wd); err != nil {
			return nil, err
		}
	}
	steps := []struct {
		name string
		run  func(context.Context) (cached bool, err error)
	}{
		{"tools", b.tools},
		{"rootfs", b.rootfs},
		{"runtime", b.buildRuntime},
		{"module", b.releaseModule},
		{"kubernetes", b.kubernetes},
		{"kubeadm-images", b.kubeadmImages},
		{"etcd", b.etcd},
		{"pause", b.pause},
		{"component-images", b.componentImages},
		{"node-base", b.nodeBase},
		{"preload", b.preload},
		{"prune", b.prune},
	}
	b.steps = len(steps)
	total := time.Now()
	for i, s := range steps {
		b.current = i + 1
		start := time.Now()
		cached, err := s.run(ctx)
		d := time.Since(start)
		if err != nil {
			b.logf("%s: failed after %s: %v", s.name, d.Round(100*time.Millisecond), err)
			return nil, fmt.Errorf("node image step %s: %w", s.name, err)
		}
		b.result.Timings = append(b.result.Timings, StepTiming{Step: s.name, Cached: cached, Duration: d})
		state := "built"
		if cached {
			state = "cached"
		}
		b.logf("%s: %s in %s", s.name, state, d.Round(100*time.Millisecond))
	}
	b.current = 0
	b.logf("image %s ready in %s", b.result.Image, time.Since(total).Round(100*time.Millisecond))
	return &b.result, nil
}

// lockBuilds takes the cache's build lock: one node image build at a time per cache, whatever
// process builds it (two kind runs at once, as CI's kind lanes are, would otherwise make the
// same preload container, run apt-get at once, write one artifact twice). The second build
// waits, then finds what the first built. It gives up when ctx ends.
func lockBuilds(ctx context.Context, cache string, logf func(string, ...any)) (func(), error) {
	path := filepath.Join(cache, "build.lock")
	unlock, err := framework.LockFile(ctx, path, func() { logf("waiting for another process's node image build (%s)", path) })
	if err != nil {
		return nil, fmt.Errorf("node image build: %w", err)
	}
	return unlock, nil
}

func (b *builder) logf(format string, a ...any) {
	prefix := "nodeimage: "
	if b.current > 0 {
		prefix = fmt.Sprintf("nodeimage [%d/%d] ", b.current, b.steps)
	}
	fmt.Fprintf(b.opts.Log, prefix+format+"\n", a...)
}

// tools checks (and on Debian installs) the host commands and libraries the build needs and
// finds kind's source. RuntimeContainerd2's runc is compiled with cgo (its nsenter, and
// libseccomp for the seccomp build tag): a C compiler, the C library's headers, pkg-config and
// libseccomp-dev.
func (b *builder) tools(ctx context.Context) (bool, error) {
	commands := map[string]string{"debootstrap": "debootstrap", "docker": "docker.io"}
	if b.runtime == RuntimeContainerd2 {
		commands["gcc"], commands["pkg-config"] = "gcc", "pkg-config"
	}
	var missing []string
	for cmd, pkg := range commands {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, pkg)
		}
	}
	if b.runtime == RuntimeContainerd2 {
		if _, err := os.Stat("/usr/include/stdio.h"); err != nil {
			missing = append(missing, "libc6-dev")
		}
		if exec.CommandContext(ctx, "pkg-config", "--exists", "libseccomp").Run() != nil {
			missing = append(missing, "libseccomp-dev")
		}
	}
	sort.Strings(missing)
	cached := len(missing) == 0
	if !cached {
		if _, err := exec.LookPath("apt-get"); err != nil {
			return false, fmt.Errorf("missing %s and no apt-get to install them", strings.Join(missing, ", "))
		}
		b.logf("tools: apt-get install %s", strings.Join(missing, " "))
		if err := b.run(ctx, "", []string{"DEBIAN_FRONTEND=noninteractive"}, "apt-get", "update", "-qq"); err != nil {
			return false, err
		}
		args := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)
		if err := b.run(ctx, "", []string{"DEBIAN_FRONTEND=noninteractive"}, "apt-get", args...); err != nil {
			return false, err
		}
	}
	v, err := b.output(ctx, b.module, "go", "env", "GOVERSION")
	if err != nil {
		return false, err
	}
	b.goVersion = strings.TrimSpace(v)
	dir, err := b.output(ctx, b.module, "go", "mod", "download", "-json", "sigs.k8s.io/kind@"+KindVersion)
	if err != nil {
		return false, err
	}
	if b.kindDir = jsonField(dir, "Dir"); b.kindDir == "" {
		return false, fmt.Errorf("go mod download sigs.k8s.io/kind@%s: no Dir in %q", KindVersion, dir)
	}
	return cached, nil
}

// key hashes a step's inputs; parts are strings or, prefixed "file:", file contents.
func key(parts ...string) (string, error) {
	h := sha256.New()
	for _, p := range parts {
		if f, ok := strings.CutPrefix(p, "file:"); ok {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("hash input: %w", err)
			}
			h.Write(data)
		} else {
			h.Write([]byte(p))
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cachedDir runs make into a fresh directory and renames it to cache/name once it succeeded,
// unless cache/name already holds the artifact of the same key. A make that fails (or is
// stopped: Ctrl-C kills its go build) leaves nothing: its directory is removed.
func (b *builder) cachedDir(name, k string, make func(dir string) error) (bool, error) {
	b.keys[name] = k
	dir := filepath.Join(b.cache, name)
	stamp := dir + ".key"
	if old, err := os.ReadFile(stamp); err == nil && string(old) == k {
		if _, err := os.Stat(dir); err == nil {
			return true, nil
		}
	}
	b.logf("%s: building (key %s)", name, k)
	tmp := dir + ".tmp"
	if err := removeTmp(tmp); err != nil {
		return false, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return false, err
	}
	if err := make(tmp); err != nil {
		return false, errors.Join(err, removeTmp(tmp))
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, err
	}
	return false, os.WriteFile(stamp, []byte(k), 0o644)
}

// KubernetesCommands are built from k8s.io/kubernetes/cmd: k8srelease's list, which the upstream
// agent's module of an older release resolves too, so that both select the same versions.
var KubernetesCommands = k8srelease.NodeCommands

func (b *builder) ldflags() string {
	// kubeadm and kind read the version from these (hack/lib/version.sh kube::version::ldflags).
	return "-s -w " + k8srelease.VersionLDFlags(b.release)
}

// moduleKey hashes the Go toolchain, the go.mod and go.sum of module, and extra.
func (b *builder) moduleKey(module string, extra ...string) (string, error) {
	parts := []string{b.goVersion, "file:" + filepath.Join(module, "go.mod"), "file:" + filepath.Join(module, "go.sum")}
	return key(append(parts, extra...)...)
}

func (b *builder) goBuild(ctx context.Context, module, out, ldflags string, pkgs ...string) error {
	// Kubernetes' build configuration, shared with the agents and kubelets (k8srelease.BuildFlags).
	return b.run(ctx, module, k8srelease.BuildEnv, "go", k8srelease.BuildArgs(append([]string{"-ldflags", ldflags, "-o", out}, pkgs...)...)...)
}

func (b *builder) kubernetes(ctx context.Context) (bool, error) {
	k, err := b.moduleKey(b.kubeModule, b.ldflags(), strings.Join(KubernetesCommands, ","))
	if err != nil {
		return false, err
	}
	name := "kubernetes"
	if b.release != KubernetesVersion {
		name += "-" + b.release
	}
	b.kubeDir = filepath.Join(b.cache, name)
	cached, err := b.cachedDir(name, k, func(dir string) error {
		var pkgs []string
		for _, c := range KubernetesCommands {
			pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
		}
		if b.release != KubernetesVersion {
			b.logf("kubernetes: compiling the commands of Kubernetes %s (cold: about 10 minutes on 2 cores)", b.release)
		}
		// One compile of a release at a time on this machine: the upstream agent and kubelet of
		// this release compile the same packages (k8srelease.LockRelease), and whichever comes
		// second finds them in Go's build cache.
		unlock, err := k8srelease.LockRelease(ctx, b.release, func() {
			b.logf("kubernetes: waiting for another compile of Kubernetes %s (its packages are then in Go's build cache)", b.release)
		})
		if err != nil {
			return err
		}
		defer unlock()
		return b.goBuild(ctx, b.kubeModule, dir+"/", b.ldflags(), pkgs...)
	})
	b.keys["kubernetes"] = k
	return cached, err
}

func (b *builder) pause(ctx context.Context) (bool, error) {
	k, err := b.moduleKey(b.module, "pause", "file:"+filepath.Join(b.module, "pause", "main.go"))
	if err != nil {
		return false, err
	}
	return b.cachedDir("pause", k, func(dir string) error {
		return b.goBuild(ctx, b.module, filepath.Join(dir, "pause"), "-s -w", "./pause")
	})
}

// rootfsCleanup is kind's images/base/Dockerfile clean-up of systemd units, as paths to remove
// (globs) relative to the rootfs.
var rootfsCleanup = []string{
	"usr/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
	"usr/lib/systemd/system/multi-user.target.wants/*",
	"etc/systemd/system/*.wants/*",
	"usr/lib/systemd/system/local-fs.target.wants/*",
	"usr/lib/systemd/system/sockets.target.wants/*udev*",
	"usr/lib/systemd/system/sockets.target.wants/*initctl*",
	"usr/lib/systemd/system/basic.target.wants/*",
	"var/cache/apt/archives/*.deb",
}

func (b *builder) rootfs(ctx context.Context) (bool, error) {
	if os.Geteuid() != 0 {
		return false, errors.New("debootstrap needs root")
	}
	packages := b.packages()
	k, err := key(Suite, b.opts.Mirror, strings.Join(packages, ","), strings.Join(rootfsCleanup, ","), "ReadKMsg=no")
	if err != nil {
		return false, err
	}
	name := b.rootfsName()
	b.rootfsDir = filepath.Join(b.cache, name)
	cached, err := b.cachedDir(name, k, func(dir string) error {
		err := b.run(ctx, "", nil, "debootstrap", "--variant=minbase", "--include="+strings.Join(packages, ","),
			Suite, dir, b.opts.Mirror)
		if err != nil {
			return err
		}
		for _, g := range rootfsCleanup {
			matches, err := filepath.Glob(filepath.Join(dir, g))
			if err != nil {
				return err
			}
			for _, m := range matches {
				if err := os.Remove(m); err != nil {
					return fmt.Errorf("rootfs clean-up: %w", err)
				}
			}
		}
		// kind images/base/Dockerfile: journald must not read /dev/kmsg in a container.
		f, err := os.OpenFile(filepath.Join(dir, "etc/systemd/journald.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteString("ReadKMsg=no\n"); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	b.keys["rootfs"] = k
	return cached, err
}

// packages are the Debian packages of the runtime's rootfs: Packages, without
// DebianRuntimePackages but for RuntimeDebian.
func (b *builder) packages() []string {
	if b.runtime == RuntimeDebian {
		return Packages
	}
	return slices.DeleteFunc(slices.Clone(Packages), func(p string) bool { return slices.Contains(DebianRuntimePackages, p) })
}

// rootfsName is the cache directory of the runtime's rootfs: RuntimeDebian's keeps the name
// "rootfs" it had before there were runtimes (the same packages, the same key: a cache of then
// serves it), every other runtime's is rootfs-RUNTIME.
func (b *builder) rootfsName() string {
	if b.runtime == RuntimeDebian {
		return "rootfs"
	}
	return "rootfs-" + b.runtime
}

func (b *builder) run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out, 30))
	}
	return nil
}

func (b *builder) output(ctx context.Context, dir string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail([]byte(stderr.String()), 30))
	}
	return string(out), nil
}

// tail keeps the last n lines of out, for error messages.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
