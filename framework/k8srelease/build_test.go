package k8srelease

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

// "upstream" alone is the release agents/upstream/go.mod requires: the one built in place.
func TestDefaultReleaseIsTheAgentModules(t *testing.T) {
	src, err := sourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := pinnedRelease(filepath.Join(src, AgentDir))
	if err != nil {
		t.Fatal(err)
	}
	if pinned != DefaultRelease {
		t.Errorf("%s/go.mod requires k8s.io/kubernetes %s, DefaultRelease is %s: change both", AgentDir, pinned, DefaultRelease)
	}
}

// A release volperm does not support is refused in one line that says what to use, before
// anything is built.
func TestAgentRefusesReleases(t *testing.T) {
	for _, r := range []string{"v1.33.0", "v1.38.0", "1.36.3", "v1.36", "latest", "v1.36.3; rm -rf /"} {
		_, err := Agent(context.Background(), r, nil)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "upstream@v1.N.P with v1.N one of v1.34, v1.35, v1.36, v1.37") {
			t.Errorf("Agent(%q) = %v, want a one-line refusal naming the supported releases", r, err)
		}
	}
}

// The module of another release requires k8s.io/kubernetes at that release and every staging
// module at the matching v0.N.P, and takes volperm's execproto from a copy that requires nothing.
func TestGenerateAnotherRelease(t *testing.T) {
	src, err := sourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "src")
	// The go.mod of k8s.io/kubernetes v1.34.4 replaces these (and no k8s.io/streaming).
	kmod := "module k8s.io/kubernetes\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/apimachinery => ./staging/src/k8s.io/apimachinery\n\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet\n)\n"
	dir, err := generate(filepath.Join(src, AgentDir), src, "v1.34.4", work, func(r string) ([]byte, error) {
		if r != "v1.34.4" {
			t.Errorf("asked for the go.mod of k8s.io/kubernetes %s", r)
		}
		return []byte(kmod), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := string(mod)
	if !strings.Contains(m, "\tk8s.io/kubernetes v1.34.4\n") {
		t.Errorf("go.mod does not require k8s.io/kubernetes v1.34.4:\n%s", m)
	}
	// volperm's execproto comes from a module of its own in the generated one, which requires
	// nothing: volperm's go.mod would raise the release's dependencies (issue 34).
	if !strings.Contains(m, "replace github.com/volperm/volperm => ./volperm\n") {
		t.Errorf("go.mod does not take volperm from ./volperm:\n%s", m)
	}
	proto, err := os.ReadFile(filepath.Join(dir, "volperm", "go.mod"))
	if err != nil || strings.Contains(string(proto), "require") || !strings.HasPrefix(string(proto), "module github.com/volperm/volperm\n") {
		t.Errorf("volperm/go.mod = %q, %v: want volperm's module path and no requirement", proto, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "volperm", "framework", "execproto", "execproto.go")); err != nil {
		t.Errorf("execproto is not copied into the generated module: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "volperm", "framework", "execproto", "server_test.go")); err == nil {
		t.Errorf("execproto's tests are copied into the generated module")
	}
	staging := regexp.MustCompile(`(?m)^replace k8s\.io/(\S+) => k8s\.io/\S+ (v\S+)$`).FindAllStringSubmatch(m, -1)
	if len(staging) != 3 {
		t.Errorf("go.mod replaces %d staging modules, want the 3 of that release:\n%s", len(staging), m)
	}
	for _, r := range staging {
		if r[2] != "v0.34.4" {
			t.Errorf("staging module k8s.io/%s replaced at %s, want v0.34.4", r[1], r[2])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var goFiles int
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			t.Errorf("generated module has the test file %s", e.Name())
		}
		if strings.HasSuffix(e.Name(), ".go") {
			goFiles++
		}
	}
	if goFiles < 5 {
		t.Errorf("generated module has %d Go files, want the agent's", goFiles)
	}
	// The kubelet of the release is built in the same module, and the module selects what the
	// node image's module of that release selects: its tools.go has tidy resolve every command.
	tools, err := os.ReadFile(filepath.Join(dir, "tools.go"))
	if err != nil || !strings.Contains(string(tools), "//go:build tools") {
		t.Errorf("generated module's tools.go = %q, %v: want a tools-tagged file", tools, err)
	}
	for _, c := range NodeCommands {
		if !strings.Contains(string(tools), `_ "k8s.io/kubernetes/cmd/`+c+`"`) {
			t.Errorf("generated module's tools.go does not import the %s command:\n%s", c, tools)
		}
	}
}

// The kubelet reports its release (Node.status.nodeInfo.kubeletVersion), as hack/lib/version.sh
// stamps it.
func TestVersionLDFlags(t *testing.T) {
	got := VersionLDFlags("v1.34.4")
	for _, want := range []string{"-X k8s.io/component-base/version.gitVersion=v1.34.4", "-X k8s.io/component-base/version.gitMinor=34",
		"-X k8s.io/component-base/version.gitMajor=1", "-X k8s.io/client-go/pkg/version.gitVersion=v1.34.4"} {
		if !strings.Contains(got, want) {
			t.Errorf("VersionLDFlags(v1.34.4) = %q, lacks %q", got, want)
		}
	}
}

// The node image's own kubelet is not built here: asking for it is a one-line error.
func TestKubeletOfThePinnedRelease(t *testing.T) {
	_, err := Kubelet(context.Background(), DefaultRelease, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "the kind node image's own kubelet") {
		t.Errorf("Kubelet(%s) = %v, want a refusal", DefaultRelease, err)
	}
}

// The cache key changes with the release and with the agent's source.
func TestSourceKey(t *testing.T) {
	src, err := sourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	a, err := sourceKey(src, "v1.37.1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sourceKey(src, "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("the same key for two releases")
	}
	again, err := sourceKey(src, "v1.37.1")
	if err != nil || again != a {
		t.Errorf("key of the same source = %s, %v; want %s", again, err, a)
	}
	// What the agent compiles changes the key; the rest of the harness does not.
	fake := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", AgentDir + "/go.mod", AgentDir + "/go.sum", AgentDir + "/main.go", "framework/execproto/execproto.go", "framework/case.go"} {
		if err := os.MkdirAll(filepath.Join(fake, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, f), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func() string {
		k, err := sourceKey(fake, "v1.37.1")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if err := os.WriteFile(filepath.Join(fake, "framework/case.go"), []byte("package x // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key() != k0 {
		t.Error("a change of framework/case.go, which the agent does not compile, changed its key")
	}
	for _, f := range []string{"framework/execproto/execproto.go", AgentDir + "/main.go", "go.sum"} {
		before := key()
		if err := os.WriteFile(filepath.Join(fake, f), []byte("package x // "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if key() == before {
			t.Errorf("a change of %s, which the agent compiles, left its key as it was", f)
		}
	}
}

// The agent imports no volperm package but execproto (so that it compiles against every
// release's API types): the few names it shares with the harness are spelled again in its
// source, and must stay the same.
func TestAgentSpellsTheHarnessNames(t *testing.T) {
	src, err := sourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	entries, err := os.ReadDir(filepath.Join(src, AgentDir))
	if err != nil {
		t.Fatal(err)
	}
	imports := regexp.MustCompile(`"github.com/volperm/volperm/([^"]+)"`)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, AgentDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(protoPackages, m[1]) {
				t.Errorf("%s imports volperm's %s: the agent may import %v only (it is built against older API types too, and its cache key and generated module hold those alone)", e.Name(), m[1], protoPackages)
			}
		}
	}
	for what, want := range map[string]string{
		"the fixture flexVolume driver (framework.FixtureDriver)":                          framework.FixtureDriver,
		"the serviceAccountToken (nodeimpl/atomicwriter FakeServiceAccountToken)":          atomicwriter.FakeServiceAccountToken,
		"the trust anchors (nodeimpl/atomicwriter FakeTrustAnchors)":                       atomicwriter.FakeTrustAnchors,
		"the pod certificate's key (nodeimpl/atomicwriter FakeCertificateKey)":             atomicwriter.FakeCertificateKey,
		"the pod certificate's chain (nodeimpl/atomicwriter FakeCertificateChain)":         atomicwriter.FakeCertificateChain,
		"the gate EmptyDirVolumeMode (framework.GateEmptyDirVolumeMode)":                   framework.GateEmptyDirVolumeMode,
		"the gate AtomicWriteVolumeUserFields (framework.GateAtomicWriteVolumeUserFields)": framework.GateAtomicWriteVolumeUserFields,
	} {
		if !strings.Contains(all.String(), `"`+want+`"`) {
			t.Errorf("%s does not spell %s as %q", AgentDir, what, want)
		}
	}
	// The gate table's upstream gates are the agent's (release_137.go upstreamGates).
	for _, g := range framework.UpstreamGates() {
		if !strings.Contains(all.String(), `"`+g+`": features.`+g+`,`) {
			t.Errorf("%s does not map the upstream gate %s of framework's gate table to features.%s", AgentDir, g, g)
		}
	}
}

// The drift files of a release are picked by the tags of every boundary it is older than.
func TestDriftTags(t *testing.T) {
	for release, want := range map[string]string{
		"v1.37.1": "",
		"v1.36.3": "volperm_k8s_pre_1_37",
		"v1.35.4": "volperm_k8s_pre_1_37,volperm_k8s_pre_1_36",
		"v1.34.4": "volperm_k8s_pre_1_37,volperm_k8s_pre_1_36,volperm_k8s_pre_1_35",
	} {
		if got := driftTags(release); got != want {
			t.Errorf("driftTags(%s) = %q, want %q", release, got, want)
		}
	}
}

// upstream@matrix runs one release of every supported minor, oldest first, the newest the
// default.
func TestReleasesCoverTheSupportedMinors(t *testing.T) {
	if len(Releases) != len(framework.SupportedReleases) || Releases[len(Releases)-1] != DefaultRelease {
		t.Fatalf("Releases = %v, want one per supported minor %v ending with %s", Releases, framework.SupportedReleases, DefaultRelease)
	}
	for i, r := range Releases {
		if "v1."+strconv.Itoa(framework.ReleaseMinor(r)) != framework.SupportedReleases[i] {
			t.Errorf("Releases[%d] = %s, want a release of %s", i, r, framework.SupportedReleases[i])
		}
	}
}

// buildsFor: a file is copied into an older release's module only when its build line holds
// for that release's drift tags (tidy reads every file whatever its tags).
func TestBuildsFor(t *testing.T) {
	for _, c := range []struct {
		src     string
		release string
		want    bool
	}{
		{"package main\n", "v1.34.4", true},
		{"//go:build !volperm_k8s_pre_1_37\n\npackage main\n", "v1.37.1", true},
		{"//go:build !volperm_k8s_pre_1_37\n\npackage main\n", "v1.36.3", false},
		{"// Copyright\n//go:build volperm_k8s_pre_1_37 && !volperm_k8s_pre_1_35\n\npackage main\n", "v1.35.4", true},
		{"//go:build volperm_k8s_pre_1_37 && !volperm_k8s_pre_1_35\n\npackage main\n", "v1.34.4", false},
		{"//go:build volperm_k8s_pre_1_35\n\npackage main\n", "v1.34.4", true},
	} {
		if got := buildsFor([]byte(c.src), c.release); got != c.want {
			t.Errorf("buildsFor(%q, %s) = %v, want %v", c.src, c.release, got, c.want)
		}
	}
}

// TestLockRelease: the compile lock of a release is one per machine (per cache): a second
// holder waits, says so once, and gives up when its context ends; another release's is free.
func TestLockRelease(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	unlock, err := LockRelease(context.Background(), "v1.36.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	waits := 0
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := LockRelease(ctx, "v1.36.3", func() { waits++ }); !errors.Is(err, context.DeadlineExceeded) || waits != 1 {
		t.Errorf("a second compile of v1.36.3: %v after %d waiting calls, want it to wait (said once) until its context ends", err, waits)
	}
	other, err := LockRelease(context.Background(), "v1.35.4", func() { t.Error("v1.35.4 waited for v1.36.3's lock") })
	if err != nil {
		t.Fatal(err)
	}
	other()
	if _, err := LockRelease(context.Background(), "v1.33.0", nil); err == nil {
		t.Error("LockRelease(v1.33.0): no error for a release volperm does not support")
	}
}
