// Package incontainer is what runs inside the probe containers of the container and cluster
// targets: the whole program of the static probe binary (cmd/volperm-probe). Given a Request it
// snapshots the volumes as the container sees them and runs probe ops as the process's own
// identity (the container's user) or each as its user (a root container), and prints the
// answer as an Observation (volumes[].paths and probes only). It also keeps a container alive,
// creates hostPath fixtures, changes modes for a case's steps, and is the harness's flexVolume
// driver.
package incontainer

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/fixturedriver"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/snapshot"
)

// Request is what one run of the probe binary does: snapshot Volumes first, then run Probes in
// order. Paths are as the container sees them.
type Request struct {
	Volumes []Volume     `json:"volumes,omitempty"`
	Probes  []probe.Step `json:"probes,omitempty"`
	// EachAsItsUser runs each probe in a child with exactly its user's credentials (the
	// program must be root); otherwise probes run as this process.
	EachAsItsUser bool `json:"eachAsItsUser,omitempty"`
	// UserNamespace reads the container's user namespace (/proc/self/uid_map and gid_map)
	// into the answer's userNamespace.
	UserNamespace bool `json:"userNamespace,omitempty"`
}

// Volume is one volume to snapshot at Path.
type Volume struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Root observes only the root, following symlinks (hostPath); otherwise the whole tree.
	Root bool `json:"root,omitempty"`
}

// Usage is the command line ProbeMain understands.
const Usage = `usage: volperm-probe [-request JSON|-]   run a Request (from -request, else stdin), print an Observation
       volperm-probe -wait                block until SIGTERM or SIGINT (a container's main process)
       volperm-probe -fixtures JSON       create host fixtures (Fixtures) under a node directory
       volperm-probe -chmod JSON          change a mode (Chmod: a container's step)
       volperm-probe -install-driver DIR  install this program in a kubelet flexVolume plugin dir
       fixture init|mount|unmount ...     called so, the harness's flexVolume driver`

// Fixtures is one -fixtures run: create Objects under Root (hostfix.Create).
type Fixtures struct {
	Root    string                 `json:"root"`
	Objects []framework.HostObject `json:"objects"`
}

// Chmod is one -chmod run: a container changing a mode (Case.After chmod steps).
type Chmod struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
}

// Main is the probe program's main (/volperm-probe in the probe image of the container and
// cluster targets, and `volperm probe`): args are os.Args. Called as "fixture" it is the
// harness's flexVolume driver (fixturedriver.Main); otherwise ProbeMain.
func Main(args []string, stdin io.Reader, stdout io.Writer) int {
	probe.MaybeRunChild()
	if len(args) > 0 && filepath.Base(args[0]) == fixturedriver.Program {
		return fixturedriver.Main(args[1:], stdout)
	}
	return ProbeMain(args[1:], stdin, stdout)
}

// ProbeMain runs one probe program command line (without the program name) and returns the
// exit code, 0 on success, 1 when the request could not be run, 2 for a bad command line.
// Errors go to stderr.
func ProbeMain(args []string, stdin io.Reader, stdout io.Writer) int {
	fs := flag.NewFlagSet("volperm-probe", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, Usage) }
	reqArg := fs.String("request", "", "the Request as JSON (default or -: read it from stdin)")
	wait := fs.Bool("wait", false, "block until SIGTERM or SIGINT")
	fixtures := fs.String("fixtures", "", "a Fixtures as JSON: create them")
	chmod := fs.String("chmod", "", "a Chmod as JSON: change the mode")
	driver := fs.String("install-driver", "", "a kubelet flexVolume plugin dir: install this program as the volperm/fixture driver")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	modes := 0
	for _, set := range []bool{*wait, *reqArg != "", *fixtures != "", *chmod != "", *driver != ""} {
		if set {
			modes++
		}
	}
	if fs.NArg() > 0 || modes > 1 {
		fs.Usage()
		return 2
	}
	failed := func(what string, err error, code int) int {
		fmt.Fprintf(os.Stderr, "volperm-probe: %s: %v\n", what, err)
		return code
	}
	switch {
	case *wait:
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		return 0
	case *fixtures != "":
		var f Fixtures
		if err := json.Unmarshal([]byte(*fixtures), &f); err != nil {
			return failed("fixtures", err, 2)
		}
		if err := hostfix.Create(f.Root, f.Objects); err != nil {
			return failed("fixtures", err, 1)
		}
		return 0
	case *chmod != "":
		var c Chmod
		if err := json.Unmarshal([]byte(*chmod), &c); err != nil {
			return failed("chmod", err, 2)
		}
		// syscall.Chmod, not os.Chmod: the setuid, setgid and sticky bits are taken as given.
		if err := syscall.Chmod(c.Path, c.Mode); err != nil {
			return failed("chmod "+c.Path, err, 1)
		}
		return 0
	case *driver != "":
		if err := installDriver(*driver); err != nil {
			return failed("install driver", err, 1)
		}
		return 0
	}
	raw := []byte(*reqArg)
	if *reqArg == "" || *reqArg == "-" {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(stdin, maxRequest)); err != nil {
			return failed("read request", err, 2)
		}
	}
	req, err := DecodeRequest(raw)
	if err != nil {
		return failed("read request", err, 2)
	}
	obs, err := Run(context.Background(), req)
	if err != nil {
		return failed("run request", err, 1)
	}
	if err := json.NewEncoder(stdout).Encode(obs); err != nil {
		return failed("write answer", err, 1)
	}
	return 0
}

// maxRequest bounds the request read from stdin: a batch of a few hundred volumes and probes is
// a few hundred KiB.
const maxRequest = 64 << 20

// installDriver copies this program to DIR/volperm~fixture/fixture (a flexVolume plugin dir),
// through a temporary name so that the kubelet never runs half a file.
func installDriver(dir string) error {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return err
	}
	d := filepath.Join(dir, fixturedriver.Dir)
	if err := os.MkdirAll(d, 0755); err != nil {
		return err
	}
	tmp := filepath.Join(d, "."+fixturedriver.Program+".new")
	if err := os.WriteFile(tmp, self, 0755); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(d, fixturedriver.Program))
}

// Snapshot observes each volume of vols (hostPath roots with stat, others as a tree).
func Snapshot(vols []Volume) ([]framework.VolumeObservation, error) {
	var out []framework.VolumeObservation
	for _, v := range vols {
		snap := snapshot.Tree
		if v.Root {
			snap = snapshot.Root
		}
		paths, err := snap(v.Path)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", v.Name, err)
		}
		out = append(out, framework.VolumeObservation{Name: v.Name, Paths: paths})
	}
	return out, nil
}

// Run snapshots req's volumes, then runs its probes: as this process's identity (the container
// target runs one container per user set), or with EachAsItsUser (root: the cluster target's
// one probe container, and this machine's observations: framework/lifecycle Here) each as
// exactly its user in a child process (probe.Run, which ctx ends). docs/spec.md "Probes": one
// syscall as (uid, gid, groups), umask 022.
func Run(ctx context.Context, req Request) (*framework.Observation, error) {
	vols, err := Snapshot(req.Volumes)
	if err != nil {
		return nil, err
	}
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Volumes: vols}
	if req.UserNamespace {
		if obs.UserNamespace, err = ownUserNamespace(); err != nil {
			return nil, err
		}
	}
	if len(req.Probes) == 0 {
		return obs, nil
	}
	if req.EachAsItsUser {
		probes := make([]framework.Probe, 0, len(req.Probes))
		roots := map[string]string{}
		for _, s := range req.Probes {
			roots[s.Probe.Volume] = s.Root
			probes = append(probes, s.Probe)
		}
		if obs.Probes, err = probe.Run(ctx, probes, roots); err != nil {
			return nil, err
		}
		return obs, nil
	}
	old := syscall.Umask(022)
	defer syscall.Umask(old)
	for _, s := range req.Probes {
		obs.Probes = append(obs.Probes, probe.Do(s.Root, s.Probe))
	}
	return obs, nil
}

// ownUserNamespace is this process's user namespace as its uid and gid maps give it
// (user_namespaces(7): read from inside, each line is "inside outside length", outside in the
// parent namespace's ids, the node's for a pod): framework.UserNamespaceOf its one range from
// id 0, or IDs 0 when the maps are not one such range, uids and gids alike.
func ownUserNamespace() (*framework.UserNamespace, error) {
	var maps [2]string
	for i, f := range []string{"/proc/self/uid_map", "/proc/self/gid_map"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		maps[i] = string(b)
	}
	m, ok := ParseIDMap(maps[0])
	if g, gok := ParseIDMap(maps[1]); !ok || !gok || g != m {
		return &framework.UserNamespace{}, nil
	}
	return framework.UserNamespaceOf([]framework.IDMap{m}), nil
}

// ParseIDMap reads a uid_map or gid_map of one line "0 HOST LENGTH".
func ParseIDMap(s string) (framework.IDMap, bool) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) != 1 {
		return framework.IDMap{}, false
	}
	f := strings.Fields(lines[0])
	if len(f) != 3 || f[0] != "0" {
		return framework.IDMap{}, false
	}
	host, err1 := strconv.ParseUint(f[1], 10, 32)
	length, err2 := strconv.ParseUint(f[2], 10, 32)
	if err1 != nil || err2 != nil {
		return framework.IDMap{}, false
	}
	return framework.IDMap{HostID: uint32(host), Length: uint32(length)}, true
}
