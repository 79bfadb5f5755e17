package nodeimage

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The runtime versions are the ones build/runtime's modules compile.
func TestRuntimeVersionsAreBuildRuntimes(t *testing.T) {
	for _, c := range []struct{ gomod, module, version string }{
		{"containerd", "github.com/containerd/containerd/v2", ContainerdVersion},
		{"runc", "github.com/opencontainers/runc", RuncVersion},
	} {
		mod, err := os.ReadFile("../../../../build/runtime/" + c.gomod + "/go.mod")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^(?:require)?\s*` + regexp.QuoteMeta(c.module) + ` (v\S+)`).FindSubmatch(mod)
		if m == nil || string(m[1]) != c.version {
			t.Errorf("build/runtime/%s/go.mod requires %s %q, the node image says %s", c.gomod, c.module, m, c.version)
		}
	}
}

// Each runtime has its rootfs, package list and tags; the Debian runtime's rootfs is the one of
// before there were runtimes, and only it has Debian's containerd and runc.
func TestRuntimesRootfsPackagesAndTags(t *testing.T) {
	if DefaultRuntime != Runtimes[0] {
		t.Errorf("Runtimes[0] = %s, want the default %s", Runtimes[0], DefaultRuntime)
	}
	seen := map[string]bool{}
	for _, r := range Runtimes {
		if err := CheckRuntime(r); err != nil {
			t.Error(err)
		}
		b := &builder{release: "v1.37.1", runtime: r}
		pkgs := b.packages()
		for _, p := range DebianRuntimePackages {
			if got := slices.Contains(pkgs, p); got != (r == RuntimeDebian) {
				t.Errorf("runtime %s: package %s in the rootfs = %v", r, p, got)
			}
		}
		if !slices.Contains(pkgs, "libseccomp2") {
			t.Errorf("runtime %s: no libseccomp2 in %v", r, pkgs)
		}
		if name := b.rootfsName(); seen[name] || (r == RuntimeDebian) != (name == "rootfs") {
			t.Errorf("runtime %s: rootfs %q", r, name)
		}
		seen[b.rootfsName()] = true
		if p := b.tagPrefix(); !strings.HasPrefix(p, "v1.37.1-"+r+"-") {
			t.Errorf("runtime %s: tag prefix %q", r, p)
		}
	}
	if !slices.Equal((&builder{runtime: RuntimeDebian}).packages(), Packages) {
		t.Error("the Debian runtime's packages are not Packages: its cached rootfs would be rebuilt")
	}
	if err := CheckRuntime(""); err != nil {
		t.Error(err)
	}
	if err := CheckRuntime("crio"); err == nil {
		t.Error(`CheckRuntime("crio"): no error`)
	}
	// One tag prefix is never the beginning of another runtime's.
	for _, a := range Runtimes {
		for _, b := range Runtimes {
			pa, pb := (&builder{release: "v1.37.1", runtime: a}).tagPrefix(), (&builder{release: "v1.37.1", runtime: b}).tagPrefix()
			if a != b && strings.HasPrefix(pb, pa) {
				t.Errorf("tag prefix %q begins %q", pa, pb)
			}
		}
	}
}
