// Package fixturedriver is the harness's flexVolume driver "volperm/fixture" (docs/spec.md
// "flexVolume") for the targets: a case's storage (framework.Case.Storage) as the reference
// node's driver files, and Main, the driver program that a real kubelet calls (installed by the
// cluster target as VENDOR~DRIVER/DRIVER in the kubelet's flexVolume plugin dir, v1.37
// pkg/volume/flexvolume probe.go), which reads the storage from the volume's options.
package fixturedriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
)

// Driver is the driver's name in a flexVolume source; Dir and Program name it in the plugin
// dir: Dir/Program.
const (
	Driver  = framework.FixtureDriver
	Dir     = "volperm~fixture"
	Program = "fixture"
)

// StorageOption is the flexVolume option that carries the volume's storage (JSON of
// []framework.File) to Main; the cluster target adds it to each fixture volume it sets up.
const StorageOption = "volperm.dev/storage"

// Storage turns the files of each volume into the reference driver's storage.
func Storage(in map[string][]framework.File) map[string][]flexvolume.StorageFile {
	out := map[string][]flexvolume.StorageFile{}
	for vol, files := range in {
		out[vol] = StorageOf(files)
	}
	return out
}

// StorageOf is Storage for one volume.
func StorageOf(files []framework.File) []flexvolume.StorageFile {
	var out []flexvolume.StorageFile
	for _, f := range files {
		out = append(out, flexvolume.StorageFile{Path: f.Path, Dir: f.Dir, Symlink: f.Symlink, Mount: f.Mount, Mode: f.Mode, UID: f.UID, GID: f.GID})
	}
	return out
}

// result is the flexVolume driver output (v1.37 pkg/volume/flexvolume driver-call.go DriverStatus).
type result struct {
	Status       string          `json:"status"`
	Message      string          `json:"message,omitempty"`
	Capabilities map[string]bool `json:"capabilities,omitempty"`
}

// StateDir holds the driver's "storage is created" markers on a real node, one per volume dir
// (its path with / as _). Not beside the volume dir as on the reference node: a kubelet that
// restarts reconstructs every entry of .../volumes/volperm~fixture/ as a volume, and would tear
// a marker down as an orphaned one. /run outlives kubelet restarts, not node reboots.
var StateDir = "/run/volperm/fixture"

// Main runs one flexVolume driver call (args without the program name) and returns the exit
// code: init (no attach), mount DIR OPTIONS (on the first mount of DIR, create the storage in
// it, parents first, each entry owned and moded exactly, and leave a marker in StateDir so that
// later mounts do not create it again; like the reference driver it mounts nothing, so the
// kubelet calls it, then walks for fsGroup, on every SetUp), unmount DIR (remove DIR and its
// marker). Anything else is "Not supported".
func Main(args []string, stdout io.Writer) int {
	reply := func(r result, code int) int {
		_ = json.NewEncoder(stdout).Encode(r)
		return code
	}
	fail := func(err error) int { return reply(result{Status: "Failure", Message: err.Error()}, 1) }
	if len(args) == 0 {
		return reply(result{Status: "Not supported", Message: "no call"}, 1)
	}
	switch args[0] {
	case "init":
		return reply(result{Status: "Success", Capabilities: map[string]bool{"attach": false}}, 0)
	case "mount":
		if len(args) != 3 {
			return fail(errors.New("usage: mount DIR OPTIONS"))
		}
		if err := mount(args[1], args[2]); err != nil {
			return fail(err)
		}
		return reply(result{Status: "Success"}, 0)
	case "unmount":
		if len(args) != 2 {
			return fail(errors.New("usage: unmount DIR"))
		}
		// The storage's submounts first (flexvolume.Unmount): RemoveAll stops at a mount point.
		if err := flexvolume.Unmount(args[1]); err != nil {
			return fail(err)
		}
		if err := errors.Join(os.RemoveAll(args[1]), os.RemoveAll(marker(args[1]))); err != nil {
			return fail(err)
		}
		return reply(result{Status: "Success"}, 0)
	}
	return reply(result{Status: "Not supported", Message: args[0]}, 1)
}

func mount(dir, options string) error {
	var opts map[string]string
	if err := json.Unmarshal([]byte(options), &opts); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	done := marker(dir)
	if _, err := os.Lstat(done); err == nil {
		return nil
	}
	var files []framework.File
	if s := opts[StorageOption]; s != "" {
		if err := json.Unmarshal([]byte(s), &files); err != nil {
			return fmt.Errorf("option %s: %w", StorageOption, err)
		}
	}
	if err := flexvolume.Populate(dir, StorageOf(files)); err != nil {
		return err
	}
	if err := os.MkdirAll(StateDir, 0700); err != nil {
		return err
	}
	return os.WriteFile(done, nil, 0600)
}

// marker is the file that says dir's storage was created.
func marker(dir string) string {
	return filepath.Join(StateDir, strings.ReplaceAll(filepath.Clean(dir), "/", "_"))
}
