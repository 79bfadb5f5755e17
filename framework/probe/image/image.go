// Package image is the probe image, made one way for every target that runs probes in
// containers (container, cluster, kind): the static binary of cmd/volperm-probe (or
// $VOLPERM_PROBE_BINARY) at /volperm-probe, /tmp, entrypoint /volperm-probe -wait, tagged
// volperm/probe:<first 12 hex digits of the binary's sha256>, so that the same binary is the same
// image whoever imports it, and a changed probe is a new one. The runner image (WithRunner) is
// the same layer plus the static volperm binary at /volperm, entrypoint `/volperm runner`: the
// in-cluster run's Job (volperm cluster run --in-cluster) and a Sonobuoy plugin or hydrophone
// run it, and its probe pods run its /volperm-probe, so a cluster needs this one image only.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework/owner"
)

const (
	// Repo is the image's repository.
	Repo = "volperm/probe"
	// Path is where the image holds the probe binary; pods and containers run Path -wait.
	Path = "/volperm-probe"
	// Package is the probe binary's main package, built from this module's source.
	Package = "github.com/volperm/volperm/cmd/volperm-probe"
	// EnvBinary names a prebuilt static probe binary to use instead of building one.
	EnvBinary = "VOLPERM_PROBE_BINARY"

	// RunnerRepo is the runner image's repository.
	RunnerRepo = "volperm/volperm"
	// RunnerPath is where the runner image holds the volperm binary.
	RunnerPath = "/volperm"
	// RunnerPackage is volperm's main package.
	RunnerPackage = "github.com/volperm/volperm/cmd/volperm"
)

// Repository is ref's repository: without its digest (@sha256:...) and tag (:TAG, not a
// registry's :PORT).
func Repository(ref string) string {
	repo, _, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo
}

// Image is the probe image of one binary, or the runner image (Runner set).
type Image struct {
	// Tag is Repo:<hash of Binary>, or RunnerRepo:<hash of Binary and Runner>.
	Tag    string
	Binary []byte
	// Runner is the volperm binary of a runner image.
	Runner []byte
}

// Changes are the image's configuration, as `docker import --change` takes it.
func (i Image) Changes() []string {
	if i.Runner != nil {
		return []string{`ENTRYPOINT ["` + RunnerPath + `"]`, `CMD ["runner"]`}
	}
	return []string{`ENTRYPOINT ["` + Path + `"]`, `CMD ["-wait"]`}
}

// WithRunner is the runner image of i's probe binary and the volperm binary runner.
func (i Image) WithRunner(runner []byte) Image {
	h := sha256.New()
	h.Write(i.Binary)
	h.Write(runner)
	return Image{Tag: fmt.Sprintf("%s:%x", RunnerRepo, h.Sum(nil)[:6]), Binary: i.Binary, Runner: runner}
}

// BuildRunner returns the runner image: Build's probe binary and `go build` of RunnerPackage,
// both static, from the volperm module at moduleDir ("" = the module holding the working
// directory). The runner is built with the checkout's VCS stamp, as make build is, so that it
// names the same version (VERSION with its commit, "dirty" with local changes: docs/certify.md
// "Versions"); its image changes with every commit.
func BuildRunner(ctx context.Context, moduleDir string) (Image, error) {
	probe, err := Build(ctx, moduleDir)
	if err != nil {
		return Image{}, err
	}
	runner, err := goBuild(ctx, moduleDir, RunnerPackage, "-buildvcs=auto")
	if err != nil {
		return Image{}, err
	}
	return probe.WithRunner(runner), nil
}

// Build returns the probe image of $VOLPERM_PROBE_BINARY or, unset, of `go build` (CGO_ENABLED=0,
// -trimpath, no VCS stamp: the same source gives the same bytes, hence the same tag) of Package
// in the volperm module at moduleDir ("" = the module holding the working directory).
func Build(ctx context.Context, moduleDir string) (Image, error) {
	bin, err := binary(ctx, moduleDir)
	if err != nil {
		return Image{}, err
	}
	return Of(bin), nil
}

// Of is the image of bin, tagged by the hash of bin and the image's /etc files.
func Of(bin []byte) Image {
	h := sha256.New()
	h.Write(bin)
	for _, f := range etcFiles() {
		h.Write([]byte(f.body))
	}
	return Image{Tag: fmt.Sprintf("%s:%x", Repo, h.Sum(nil)[:6]), Binary: bin}
}

// etcFiles are the image's /etc/passwd and /etc/group (Users, Groups): the users a
// runtime reads for a container's uid (docs/spec.md [groups.policy]).
func etcFiles() []struct{ path, body string } {
	return []struct{ path, body string }{{"etc/passwd", Passwd()}, {"etc/group", GroupFile()}}
}

// Entry is one entry of the image's layer: every one is owned by root (uid and gid 0).
type Entry struct {
	// Path is relative to the image's root, without a trailing slash.
	Path string
	Dir  bool
	Mode uint32
	// Body is a file's content; an executable's is the binary's.
	Body []byte
}

// Entries are the entries of i's layer, in layer order: /tmp (1777), /etc (0755), /etc/passwd
// and /etc/group (0644), /volperm-probe (0755), and of a runner image /volperm (0755). The
// image's root itself is no entry (a runtime makes it: 0755 root).
func (i Image) Entries() []Entry {
	out := []Entry{{Path: "tmp", Dir: true, Mode: 0o1777}, {Path: "etc", Dir: true, Mode: 0o755}}
	for _, f := range etcFiles() {
		out = append(out, Entry{Path: f.path, Mode: 0o644, Body: []byte(f.body)})
	}
	out = append(out, Entry{Path: strings.TrimPrefix(Path, "/"), Mode: 0o755, Body: i.Binary})
	if i.Runner != nil {
		out = append(out, Entry{Path: strings.TrimPrefix(RunnerPath, "/"), Mode: 0o755, Body: i.Runner})
	}
	return out
}

// Layer is the image's one layer: a tar of Entries.
func (i Image) Layer() ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	epoch := time.Unix(0, 0)
	for _, e := range i.Entries() {
		h := &tar.Header{Name: e.Path, Mode: int64(e.Mode), Size: int64(len(e.Body)), Typeflag: tar.TypeReg, ModTime: epoch}
		if e.Dir {
			h.Name, h.Typeflag, h.Size = e.Path+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.Body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Materialize writes i's entries below dir (which it makes 0755), each with its mode and owned
// by root: the image's files as a runtime unpacks them for an image volume (docs/spec.md
// [mounts.image-volume]; the harness plays the runtime on this machine's targets).
func (i Image) Materialize(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, e := range i.Entries() {
		p := filepath.Join(dir, e.Path)
		var err error
		if e.Dir {
			err = os.Mkdir(p, 0o700)
		} else {
			err = os.WriteFile(p, e.Body, 0o600)
		}
		if err != nil {
			return err
		}
		// syscall.Chmod: the sticky bit is taken as given (os.Chmod would too, but explicitly).
		if err := syscall.Chmod(p, e.Mode); err != nil {
			return err
		}
		if err := os.Lchown(p, 0, 0); err != nil {
			return err
		}
	}
	return syscall.Chmod(dir, 0o755)
}

func binary(ctx context.Context, moduleDir string) ([]byte, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvBinary, err)
		}
		return b, nil
	}
	return goBuild(ctx, moduleDir, Package, "-buildvcs=false")
}

// goBuild is the static binary of pkg (CGO_ENABLED=0, -trimpath) built in the volperm module at
// moduleDir ("" = the working directory's), with buildvcs: -buildvcs=false for the probe (no VCS
// stamp: the same source gives the same bytes), -buildvcs=auto for the runner (the commit and
// its changes, framework/report versionOf; auto is also what overrides a -buildvcs=false in
// GOFLAGS).
func goBuild(ctx context.Context, moduleDir, pkg, buildvcs string) ([]byte, error) {
	if moduleDir == "" {
		gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
		if err != nil {
			return nil, fmt.Errorf("build %s: `go env GOMOD`: %w (install Go, or set %s to a static volperm-probe)", pkg, err, EnvBinary)
		}
		mod := strings.TrimSpace(string(gomod))
		if mod == "" || mod == os.DevNull {
			return nil, fmt.Errorf("build %s: the working directory is not inside the volperm module: run from the repository or set %s to a static volperm-probe", pkg, EnvBinary)
		}
		moduleDir = filepath.Dir(mod)
	}
	dir, err := os.MkdirTemp("", "volperm-probe-build-"+owner.Self().Tag()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Marked, so that the next run removes it if this one is killed while building.
	if err := owner.Write(dir); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", buildvcs, "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = moduleDir
	// GOTMPDIR inside the marked dir: the compiler's work dirs go with it if this run is killed.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOTMPDIR="+dir)
	// The build dies with this run: a killed run leaves no compiler writing into its dir.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s in %s: %w: %s", pkg, cmd.Dir, err, strings.TrimSpace(string(msg)))
	}
	return os.ReadFile(out)
}
