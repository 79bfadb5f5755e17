package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RuntimeContainerd2 is compiled here, as kind's base image compiles its containerd and runc
// (images/base/Dockerfile), from the Go module proxy in two modules of build/runtime: one for
// containerd, one for runc (together, each would raise some of the other's dependencies; apart,
// each builds with exactly the versions its own go.mod selects). One build serves the node images
// of every release.

// runtimeBuild is one `go build` of the runtime step. Its flags never vary, so Go's build cache
// serves a rebuild of the same inputs.
type runtimeBuild struct {
	module  string // under build/runtime
	env     []string
	tags    string
	ldflags string
	pkgs    []string
}

// runtimeBuilds are the runtime's builds, each into the runtime directory.
//
// containerd, its shim and ctr: without cgo (containerd's Makefile builds the shim so; its only
// cgo part, the btrfs snapshotter, is left out, and so are zfs and devmapper, as kind leaves them
// out), one build so that they share their packages; the version set as its Makefile sets it.
//
// runc: cgo (nsenter is C) and the build tag seccomp (libseccomp, through pkg-config: the tools
// step installs libseccomp-dev), so that a container's seccomp profile (RuntimeDefault) is
// loaded; linked statically as runc's own release binaries are (its Makefile's `static`: netgo,
// osusergo, -extldflags -static), so that it depends on no library of the node's rootfs nor on
// the host's C library. runc's Makefile also sets the tag libpathrs, which needs the libpathrs
// library (Rust; not packaged in Debian 12): left out, runc uses its Go implementation of the
// same path resolution (internal/pathrs).
func runtimeBuilds() []runtimeBuild {
	const c = "github.com/containerd/containerd/v2"
	return []runtimeBuild{
		{module: "containerd", env: []string{"CGO_ENABLED=0"}, tags: "urfave_cli_no_docs no_btrfs no_devmapper no_zfs",
			ldflags: "-s -w -X " + c + "/version.Version=" + ContainerdVersion,
			pkgs:    []string{c + "/cmd/containerd", c + "/cmd/containerd-shim-runc-v2", c + "/cmd/ctr"}},
		{module: "runc", env: []string{"CGO_ENABLED=1"}, tags: "seccomp urfave_cli_no_docs netgo osusergo",
			ldflags: "-s -w -extldflags -static", pkgs: []string{"github.com/opencontainers/runc"}},
	}
}

// RuntimeCommands are the runtime step's binaries and where the node image installs them:
// kind's places (images/base/Dockerfile), which its units and PATH name. A list, not a map: the
// node image's key hashes its entries in this order.
var RuntimeCommands = []struct{ Name, Path string }{
	{"containerd", "usr/local/bin/containerd"},
	{"containerd-shim-runc-v2", "usr/local/bin/containerd-shim-runc-v2"},
	{"ctr", "usr/local/bin/ctr"},
	{"runc", "usr/local/sbin/runc"},
}

// runtimeModules is build/runtime, beside build/kindnode.
func (b *builder) runtimeModules() string { return filepath.Join(filepath.Dir(b.module), "runtime") }

// buildRuntime compiles RuntimeContainerd2 (cached); RuntimeDebian's is in its rootfs.
func (b *builder) buildRuntime(ctx context.Context) (bool, error) {
	if b.runtime != RuntimeContainerd2 {
		b.keys["runtime"] = b.runtime
		return true, nil
	}
	// libseccomp's version: runc links it statically.
	seccomp, err := b.output(ctx, "", "pkg-config", "--modversion", "libseccomp")
	if err != nil {
		return false, err
	}
	parts := []string{b.goVersion, "libseccomp " + strings.TrimSpace(seccomp)}
	for _, r := range runtimeBuilds() {
		m := filepath.Join(b.runtimeModules(), r.module)
		parts = append(parts, r.module, "file:"+filepath.Join(m, "go.mod"), "file:"+filepath.Join(m, "go.sum"),
			strings.Join(r.env, " "), r.tags, r.ldflags, strings.Join(r.pkgs, ","))
	}
	k, err := key(parts...)
	if err != nil {
		return false, err
	}
	b.runtimeDir = filepath.Join(b.cache, "runtime")
	return b.cachedDir("runtime", k, func(dir string) error {
		for _, r := range runtimeBuilds() {
			args := append([]string{"build", "-trimpath", "-tags", r.tags, "-ldflags", r.ldflags, "-o", dir + "/"}, r.pkgs...)
			if err := b.run(ctx, filepath.Join(b.runtimeModules(), r.module), r.env, "go", args...); err != nil {
				return err
			}
		}
		for _, c := range RuntimeCommands {
			if _, err := os.Stat(filepath.Join(dir, c.Name)); err != nil {
				return fmt.Errorf("runtime: %w", err)
			}
		}
		// The versions, and runc's seccomp: a runc built without it prints no libseccomp line.
		for _, c := range []string{"containerd", "runc"} {
			out, err := b.output(ctx, "", filepath.Join(dir, c), "--version")
			if err != nil {
				return err
			}
			if c == "runc" && !strings.Contains(out, "libseccomp:") {
				return fmt.Errorf("runc was built without seccomp: %q", out)
			}
			b.logf("runtime: %s", strings.Join(strings.Fields(out), " "))
		}
		return nil
	})
}
