// Package k8srelease builds the Kubernetes code of a release from the module proxy, for the
// targets that run it: the upstream agent (agents/upstream compiled against k8s.io/kubernetes at
// that release, Agent) and the kubelet command of that release (Kubelet, which a kind worker
// runs in place of its own: release skew on real nodes). Both are built in a module generated per
// release (k8s.io/kubernetes at the release, each of its staging modules at v0.N.P) and cached in
// CacheDir, one directory per release, under a key of what they are built from.
package k8srelease

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/build/constraint"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework"
)

// DefaultRelease is the release "upstream" alone means: the newest supported, the one
// agents/upstream/go.mod requires (a test checks they agree); framework's release table.
var DefaultRelease = framework.NewestPatch

// Releases are the release of each supported minor that upstream@matrix runs (framework's
// release table), oldest first; the last is DefaultRelease.
var Releases = framework.PatchReleases()

// AgentDir is the agent's module, relative to the root of a volperm checkout.
const AgentDir = "agents/upstream"

// EnvSource names a volperm checkout when volperm does not run inside one.
const EnvSource = "VOLPERM_SOURCE"

func init() {
	framework.RegisterEnv(framework.EnvVar{Name: EnvSource, Owner: "upstream", Meaning: "the volperm checkout whose " + AgentDir + " the upstream agent is built from (default: found from the working directory, then from the volperm binary, upwards)"})
}

var releaseRE = regexp.MustCompile(`^v1\.(\d+)\.(\d+)$`)

// Agent returns the path of the upstream agent for release ("v1.36.3"), building it first when
// the cache (CacheDir) has none for this release and this source. A build prints what it does
// to log (nil = stderr) every 30 s: a cold build compiles the Kubernetes packages, minutes.
// Builds of one release by several volperm processes wait for each other (a lock file).
func Agent(ctx context.Context, release string, log io.Writer) (string, error) {
	// One binary per release for the process: both halves, and every cell of the matrix, run
	// the same agent even if the source changes during the run.
	builtMu.Lock()
	defer builtMu.Unlock()
	if p, ok := built[release]; ok {
		return p, nil
	}
	p, err := agent(ctx, release, log)
	if err == nil {
		built[release] = p
	}
	return p, err
}

var (
	builtMu sync.Mutex
	built   = map[string]string{}
)

func agent(ctx context.Context, release string, log io.Writer) (string, error) {
	m := releaseRE.FindStringSubmatch(release)
	if m == nil || !slices.Contains(framework.SupportedReleases, "v1."+m[1]) {
		return "", fmt.Errorf("upstream@%s: not a Kubernetes release volperm supports; use upstream@v1.N.P with v1.N one of %s (the module proxy's k8s.io/kubernetes releases)", release, strings.Join(framework.SupportedReleases, ", "))
	}
	if log == nil {
		log = os.Stderr
	}
	src, err := sourceRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(src, release)
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("upstream agent cache: %w", err)
	}
	bin := filepath.Join(dir, "volperm-upstream-agent-"+key[:16])
	err = cached(ctx, release, bin, log, func() error {
		if err := build(ctx, src, release, filepath.Join(dir, "src"), bin, log); err != nil {
			return err
		}
		prune(dir, filepath.Base(bin))
		return nil
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}

// cached makes sure bin, a build of release in its cache dir, exists: one that does is marked in
// use (not pruned for a day); else produce builds it, under the release's compile lock
// (LockRelease), unless another volperm built it while this one waited for the lock.
func cached(ctx context.Context, release, bin string, log io.Writer, produce func() error) error {
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		_ = os.Chtimes(bin, now, now) // in use: not pruned for a day
		return nil
	}
	unlock, err := LockRelease(ctx, release, func() {
		fmt.Fprintf(log, "volperm: waiting for another compile of Kubernetes %s\n", release)
	})
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return nil // another volperm built it while this one waited
	}
	return produce()
}

// Kubelet returns the path of the kubelet command of release ("v1.34.4"), building it first
// when the cache has none: in the module generated for the release's agent (Agent builds that
// first), whose Kubernetes packages are then compiled already, with the version the kubelet
// reports (hack/lib/version.sh's ldflags: Node.status.nodeInfo.kubeletVersion). It links the
// module's dependency versions, the release's own (the node image of that release compiles the
// same packages: docs/releases.md "One compile of each release per machine"). The release agents/upstream/go.mod
// pins is the kind node image's own kubelet: asking for it is an error.
func Kubelet(ctx context.Context, release string, log io.Writer) (string, error) {
	if log == nil {
		log = os.Stderr
	}
	src, err := sourceRoot()
	if err != nil {
		return "", err
	}
	// Refused before anything is built (make test asks, and must not compile the agent).
	if pinned, err := pinnedRelease(filepath.Join(src, AgentDir)); err != nil {
		return "", err
	} else if release == pinned {
		return "", fmt.Errorf("kubelet %s: that is the kind node image's own kubelet, not built here", release)
	}
	agentBin, err := Agent(ctx, release, log)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(agentBin)
	work := filepath.Join(dir, "src")
	key, err := kubeletKey(work, release)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubelet-"+key[:16])
	err = cached(ctx, release, bin, log, func() error {
		if _, err := os.Stat(filepath.Join(work, "tools.go")); err != nil {
			return fmt.Errorf("kubelet %s: the agent's module %s has no tools.go: remove %s and run again", release, work, agentBin)
		}
		tmp := bin + ".tmp"
		defer os.Remove(tmp)
		if err := goCmd(ctx, work, log, "building the kubelet of Kubernetes "+release+" (its packages are mostly compiled for the agent: about a minute)",
			BuildArgs("-ldflags", "-s -w "+VersionLDFlags(release), "-o", tmp, "k8s.io/kubernetes/cmd/kubelet")...); err != nil {
			return err
		}
		if err := os.Rename(tmp, bin); err != nil {
			return err
		}
		prune(dir, filepath.Base(agentBin), filepath.Base(bin))
		return nil
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}

// kubeletKey hashes what the kubelet is built from: the release, the Go toolchain and the
// module versions of the generated module (its go.sum after tidy), not volperm's source, so a
// change of the harness does not rebuild it.
func kubeletKey(work, release string) (string, error) {
	sum, err := os.ReadFile(filepath.Join(work, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("kubelet %s: %w", release, err)
	}
	goVersion, err := osexec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("kubelet %s: %w", release, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "kubelet %s\ngo %s\nbuild %v %v\n%s", release, bytes.TrimSpace(goVersion), BuildEnv, BuildFlags, sum)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VersionLDFlags are the -X flags that make a Kubernetes command report release as its version
// (hack/lib/version.sh kube::version::ldflags); kubeadm and kind read it too.
func VersionLDFlags(release string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(release, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var f []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		f = append(f, "-X", pkg+".gitVersion="+release, "-X", pkg+".gitMajor="+major, "-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean")
	}
	return strings.Join(f, " ")
}

// CacheDir is where built agents live: framework.CacheDir("upstream"), one directory per
// release.
func CacheDir() (string, error) { return framework.CacheDir("upstream") }

// sourceRoot is the volperm checkout holding agents/upstream: $VOLPERM_SOURCE, else the first
// directory with agents/upstream/go.mod from the working directory upwards, then from the
// running binary's directory upwards (bin/volperm of a checkout).
func sourceRoot() (string, error) {
	if d := os.Getenv(EnvSource); d != "" {
		if _, err := os.Stat(filepath.Join(d, AgentDir, "go.mod")); err != nil {
			return "", fmt.Errorf("%s=%s: no %s/go.mod there; point it at a volperm checkout", EnvSource, d, AgentDir)
		}
		return filepath.Abs(d)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, s := range starts {
		for d := s; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, AgentDir, "go.mod")); err == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("the upstream target builds its agent from a volperm checkout's %s, and none was found above %s: run volperm inside a checkout or set %s", AgentDir, strings.Join(starts, " or "), EnvSource)
}

// sourceKey hashes what the agent is built from: the release, the Go toolchain, the agent's
// module and the one volperm package it compiles in (every non-test Go file of protoPackages,
// and the root go.mod and go.sum), so that a change elsewhere in the harness does not relink
// four agents (TestAgentSpellsTheHarnessNames keeps the agent's imports to protoPackages).
func sourceKey(src, release string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "release %s\n", release)
	goVersion, err := osexec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("the upstream target builds its agent with the go command: %w (install Go, or put it on PATH)", err)
	}
	fmt.Fprintf(h, "go %s\nbuild %v %v\n", bytes.TrimSpace(goVersion), BuildEnv, BuildFlags)
	var files []string
	for _, d := range append([]string{AgentDir}, protoPackages...) {
		err := filepath.WalkDir(filepath.Join(src, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := e.Name()
			if e.IsDir() {
				if name == "testdata" || strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) || (d == AgentDir && (name == "go.mod" || name == "go.sum")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("hash the upstream agent's source: %w", err)
		}
	}
	files = append(files, filepath.Join(src, "go.mod"), filepath.Join(src, "go.sum"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hash the upstream agent's source: %w", err)
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// build compiles the agent for release into bin. For the release agents/upstream/go.mod
// requires it builds that module in place; for another it generates a module in work: the
// agent's Go files, and a go.mod requiring k8s.io/kubernetes at release with every staging
// module replaced at the matching v0.N.P (docs/releases.md), resolved by `go mod tidy`.
func build(ctx context.Context, src, release, work, bin string, log io.Writer) error {
	agent := filepath.Join(src, AgentDir)
	pinned, err := pinnedRelease(agent)
	if err != nil {
		return err
	}
	dir := agent
	if release != pinned {
		if dir, err = generate(agent, src, release, work, kubernetesGoMod(ctx)); err != nil {
			return err
		}
		if err := goCmd(ctx, dir, log, "resolving the modules of Kubernetes "+release, "mod", "tidy"); err != nil {
			return err
		}
	}
	tmp := bin + ".tmp"
	defer os.Remove(tmp)
	args := BuildArgs("-o", tmp)
	if tags := driftTags(release); tags != "" {
		args = append(args, "-tags", tags)
	}
	if err := goCmd(ctx, dir, log, "building the upstream agent for Kubernetes "+release+" into "+filepath.Dir(bin)+" (a cold build compiles the Kubernetes packages: minutes; then it is cached)", append(args, ".")...); err != nil {
		return err
	}
	return os.Rename(tmp, bin)
}

// driftTags are the build tags that pick the agent's files for release where the Kubernetes
// code it calls differs between releases (docs/releases.md "Drift"): volperm_k8s_pre_1_37
// before v1.37, volperm_k8s_pre_1_36 before v1.36, volperm_k8s_pre_1_35 before v1.35.
func driftTags(release string) string {
	var tags []string
	minor := framework.ReleaseMinor(release)
	if minor < 37 {
		tags = append(tags, "volperm_k8s_pre_1_37")
	}
	if minor < 36 {
		tags = append(tags, "volperm_k8s_pre_1_36")
	}
	if minor < 35 {
		tags = append(tags, "volperm_k8s_pre_1_35")
	}
	return strings.Join(tags, ",")
}

// pinnedRelease is the k8s.io/kubernetes version agents/upstream/go.mod requires.
func pinnedRelease(agent string) (string, error) {
	b, err := os.ReadFile(filepath.Join(agent, "go.mod"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s/go.mod requires no k8s.io/kubernetes", AgentDir)
	}
	return string(m[1]), nil
}

// generate writes the module of the agent for release into work (emptied first). goMod reads
// the go.mod of k8s.io/kubernetes at a release.
func generate(agent, src, release, work string, goMod func(release string) ([]byte, error)) (string, error) {
	if err := os.RemoveAll(work); err != nil {
		return "", err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(agent)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(agent, n))
		if err != nil {
			return "", err
		}
		if !buildsFor(b, release) {
			// A file of another release (groups_137.go): `go mod tidy` reads every file whatever
			// its tags, and would look for packages this release's modules lack.
			continue
		}
		if err := os.WriteFile(filepath.Join(work, n), b, 0o644); err != nil {
			return "", err
		}
	}
	mod, err := moduleFile(agent, release, goMod)
	if err != nil {
		return "", err
	}
	goLine, err := GoDirective(filepath.Join(agent, "go.mod"))
	if err != nil {
		return "", err
	}
	if err := copyProto(src, work, goLine); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(mod), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "tools.go"), []byte(agentTools()), 0o644); err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(agent, "go.sum"))
	if err != nil {
		return "", err
	}
	return work, os.WriteFile(filepath.Join(work, "go.sum"), sum, 0o644)
}

// buildsFor says whether Go source src is built for release: its //go:build line, if any,
// holds with the drift tags of release set (driftTags) and no other tag.
func buildsFor(src []byte, release string) bool {
	tags := strings.Split(driftTags(release), ",")
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") && !constraint.IsGoBuild(line) {
			continue
		}
		if !constraint.IsGoBuild(line) {
			return true // the package clause: no constraint
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			return true // let the compiler say what is wrong
		}
		return expr.Eval(func(tag string) bool { return slices.Contains(tags, tag) })
	}
	return true
}

// NodeCommands are the Kubernetes commands (k8s.io/kubernetes/cmd/...) of a kind node image.
var NodeCommands = []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// agentTools is the generated module's tools.go: it makes `go mod tidy` resolve the modules of
// every command of the release's node image (NodeCommands), so that Kubelet can build the
// kubelet in the agent's module and the module selects what the node image's module of that
// release selects, dependency for dependency (never compiled into the agent: the tools tag is
// never set).
func agentTools() string {
	var b strings.Builder
	b.WriteString("//go:build tools\n\npackage main\n\nimport (\n")
	for _, c := range NodeCommands {
		fmt.Fprintf(&b, "\t_ \"k8s.io/kubernetes/cmd/%s\"\n", c)
	}
	b.WriteString(")\n")
	return b.String()
}

// moduleFile is the go.mod of the agent for release: the go version of agents/upstream/go.mod,
// k8s.io/kubernetes at release, volperm's execproto from protoModule, and every staging module of that
// release (those its own go.mod replaces with ./staging/src/...: the set changes between
// releases, k8s.io/streaming is new in v1.37) replaced at the matching v0.N.P.
func moduleFile(agent, release string, goMod func(release string) ([]byte, error)) (string, error) {
	goLine, err := GoDirective(filepath.Join(agent, "go.mod"))
	if err != nil {
		return "", err
	}
	kmod, err := goMod(release)
	if err != nil {
		return "", err
	}
	replaces, err := stagingReplaces(kmod, release)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module github.com/volperm/volperm/agents/upstream\n\n%s\n\nrequire (\n", goLine)
	fmt.Fprintf(&b, "\tgithub.com/volperm/volperm v0.0.0-00010101000000-000000000000\n\tk8s.io/kubernetes %s\n)\n\n", release)
	fmt.Fprintf(&b, "replace github.com/volperm/volperm => ./%s\n\n", protoModule)
	return b.String() + replaces, nil
}

// protoModule is the directory, in the generated module of another release, of the one volperm
// package the agent imports (framework/execproto), copied into a module of volperm's path that
// requires nothing: so that the agent's module selects every dependency at the version the
// release selects, as the node image of that release does (k8srelease.ReleaseModule), and Go's
// build cache compiles the release's packages once for both (issue 34; were volperm's own go.mod
// in the graph, its newer x/sys, yaml, cbor, ... would raise them, and every package above).
const protoModule = "volperm"

// protoPackages are the volperm packages the agent imports, copied into protoModule.
var protoPackages = []string{"framework/execproto"}

// copyProto writes protoModule into work: a go.mod of volperm's module path with the go line
// goLine and no requirement, and the non-test Go files of protoPackages from the checkout src.
func copyProto(src, work, goLine string) error {
	root := filepath.Join(work, protoModule)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/volperm/volperm\n\n"+goLine+"\n"), 0o644); err != nil {
		return err
	}
	for _, pkg := range protoPackages {
		entries, err := os.ReadDir(filepath.Join(src, pkg))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(root, pkg), 0o755); err != nil {
			return err
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, pkg, n))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(root, pkg, n), b, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// stagingReplaces are the replace lines of a module that requires k8s.io/kubernetes at release:
// every staging module the release's own go.mod (kmod) replaces with ./staging/src/..., at the
// matching v0.N.P.
func stagingReplaces(kmod []byte, release string) (string, error) {
	staging := regexp.MustCompile(`(?m)^\s*(?:replace\s+)?(k8s\.io/\S+) => \./staging/src/`).FindAllSubmatch(kmod, -1)
	if len(staging) == 0 {
		return "", fmt.Errorf("the go.mod of k8s.io/kubernetes %s replaces no staging module", release)
	}
	var b strings.Builder
	v0 := "v0." + strings.TrimPrefix(release, "v1.")
	for _, m := range staging {
		fmt.Fprintf(&b, "replace %s => %s %s\n", m[1], m[1], v0)
	}
	return b.String(), nil
}

// ReleaseModule writes into dir (which must exist and be empty) a module of path that builds
// the Kubernetes commands of release as that release does: k8s.io/kubernetes at release, its
// staging modules replaced (stagingReplaces), imports (say "k8s.io/kubernetes/cmd/kubeadm")
// pinned by a tools.go, nothing of volperm's, so that every dependency is at the version the
// release's own go.mod selects (ToolsModule). goLine is the module's go directive.
func ReleaseModule(ctx context.Context, release, dir, path, goLine string, imports []string, log io.Writer) error {
	if err := CheckRelease(release); err != nil {
		return err
	}
	kmod, err := kubernetesGoMod(ctx)(release)
	if err != nil {
		return err
	}
	replaces, err := stagingReplaces(kmod, release)
	if err != nil {
		return err
	}
	return ToolsModule(ctx, dir, path, goLine, "k8s.io/kubernetes "+release, replaces, imports, log)
}

// ToolsModule writes into dir (which must exist and be empty) a module of path that requires
// require ("MODULE VERSION"), with more go.mod lines extra (replaces), and a tools.go that
// imports imports (never compiled: the tools build tag), then resolves it (`go mod tidy`), so
// that `go build` in dir builds those packages at the versions the requirement selects.
// goLine is the module's go directive ("go 1.26.8", GoDirective).
func ToolsModule(ctx context.Context, dir, path, goLine, require, extra string, imports []string, log io.Writer) error {
	mod := fmt.Sprintf("module %s\n\n%s\n\nrequire %s\n\n%s", path, goLine, require, extra)
	var tools strings.Builder
	tools.WriteString("//go:build tools\n\n// Package tools pins the packages this module builds (generated by volperm).\npackage tools\n\nimport (\n")
	for _, i := range imports {
		fmt.Fprintf(&tools, "\t_ %q\n", i)
	}
	tools.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(tools.String()), 0o644); err != nil {
		return err
	}
	return goCmd(ctx, dir, log, "resolving the modules of "+require, "mod", "tidy")
}

// GoDirective is the go directive ("go 1.26.8") of the go.mod file at path.
func GoDirective(path string) (string, error) {
	mod, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line := regexp.MustCompile(`(?m)^go \S+$`).Find(mod)
	if line == nil {
		return "", fmt.Errorf("%s has no go directive", path)
	}
	return string(line), nil
}

// CheckRelease says what is wrong with release as a Kubernetes release volperm builds: it must
// be v1.N.P with v1.N one of framework.SupportedReleases.
func CheckRelease(release string) error {
	m := releaseRE.FindStringSubmatch(release)
	if m == nil || !slices.Contains(framework.SupportedReleases, "v1."+m[1]) {
		return fmt.Errorf("Kubernetes release %q: not one volperm supports; write v1.N.P with v1.N one of %s (the module proxy's k8s.io/kubernetes releases), say %s", release, strings.Join(framework.SupportedReleases, ", "), DefaultRelease)
	}
	return nil
}

// kubernetesGoMod is the go.mod of k8s.io/kubernetes at release, from the module cache or the
// module proxy (`go mod download`).
func kubernetesGoMod(ctx context.Context) func(release string) ([]byte, error) {
	return func(release string) ([]byte, error) {
		out, err := osexec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+release).Output()
		var info struct{ GoMod, Error string }
		if jerr := json.Unmarshal(out, &info); jerr != nil || info.GoMod == "" {
			return nil, fmt.Errorf("download k8s.io/kubernetes %s from the module proxy: %v %s", release, err, info.Error)
		}
		return os.ReadFile(info.GoMod)
	}
}

// goCmd runs the go command in dir, saying what it does and, every 30 s, that it still does;
// on failure the error carries the end of its output.
func goCmd(ctx context.Context, dir string, log io.Writer, what string, args ...string) error {
	start := time.Now()
	fmt.Fprintf(log, "volperm: %s\n", what)
	cmd := osexec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), BuildEnv...)
	// Nothing left behind (docs/cleanup.md): the go command and its compilers are a process group
	// of their own, killed whole when ctx ends; the go command is killed when this process dies
	// (a go test that timed out left its go build compiling for minutes).
	// The death signal is the forking thread's: this goroutine keeps that thread until the build
	// ends, so that no other goroutine's exit takes the thread (and the build) with it.
	// Ended, the group gets SIGINT first: the go command removes its work directory
	// ($TMPDIR/go-build*) on an interrupt; what is still there after a grace is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		time.AfterFunc(goCmdGrace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		return syscall.Kill(-pgid, syscall.SIGINT)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("go %s: %w", args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				tail := out.String()
				if len(tail) > 2000 {
					tail = "..." + tail[len(tail)-2000:]
				}
				return fmt.Errorf("go %s in %s failed: %w\n%s", strings.Join(args, " "), dir, err, tail)
			}
			fmt.Fprintf(log, "volperm: done in %s\n", time.Since(start).Round(time.Second))
			return nil
		case <-tick.C:
			fmt.Fprintf(log, "volperm: still %s (%s)\n", strings.SplitN(what, " (", 2)[0], time.Since(start).Round(time.Second))
		}
	}
}

// goCmdGrace is how long an interrupted go command has to clean up before its group is killed.
const goCmdGrace = 10 * time.Second

// lock takes an exclusive lock on the file path, waiting for another holder.
// LockRelease takes the compile lock of release on this machine, held by whatever compiles that
// release's Kubernetes packages: the upstream agent and kubelet here, the node image's commands
// (framework/targets/kind/nodeimage). Two compiles of one release at once would both compile
// every package; one after the other, the second finds them in Go's build cache (issue 34).
// waiting is called once when another holds it.
func LockRelease(ctx context.Context, release string, waiting func()) (func(), error) {
	if err := CheckRelease(release); err != nil {
		return nil, err
	}
	cache, err := CacheDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cache, release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compile lock of Kubernetes %s: %w", release, err)
	}
	return framework.LockFile(ctx, filepath.Join(dir, "lock"), waiting)
}

// pruneAge is how long an agent built from another source is kept: another volperm (another
// checkout, a run still going) may be running it.
const pruneAge = 24 * time.Hour

// prune removes the release's agents built from other sources than keep, a day after they were
// last built or used.
func prune(dir string, keep ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !(strings.HasPrefix(n, "volperm-upstream-agent-") || strings.HasPrefix(n, "kubelet-")) || slices.Contains(keep, n) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > pruneAge {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}
