package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// fixtureDriver is the flexVolume driver whose storage the harness puts in place
// (docs/exec-protocol.md "Request": volumes).
const fixtureDriver = "volperm/fixture"

// installFixtureDriver writes the "volperm/fixture" flexVolume driver into the kubelet's
// flexVolume plugin dir, where the real prober (pkg/volume/flexvolume probe.go) finds it as
// VENDOR~DRIVER/DRIVER. The harness has already put the storage of the case in the volume's
// directory (docs/exec-protocol.md "Request": a flexVolume with driver volperm/fixture), so the
// driver's mount mounts nothing and succeeds, and the kubelet then walks, on every setup; its
// unmount removes the directory, as a driver that unmounted would leave it for the kubelet.
func installFixtureDriver(pluginDir string) error {
	dir := filepath.Join(pluginDir, "volperm~fixture")
	if err := os.MkdirAll(dir, 0755); err != nil {
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	path := filepath.Join(dir, "fixture")
	if b, err := os.ReadFile(path); err == nil && string(b) == fixtureScript {
		return nil // installed by an earlier call
	}
	// Written beside it and renamed: an agent process of another call may be running it.
	tmp, err := os.CreateTemp(dir, ".fixture-")
	if err != nil {
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	_, werr := tmp.WriteString(fixtureScript)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0755), os.Rename(tmp.Name(), path)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	return nil
}

// fixtureScript is the driver, in the flexVolume call convention (init, mount DIR OPTIONS,
// unmount DIR).
const fixtureScript = `#!/bin/sh
# volperm/fixture flexVolume driver, written by volperm's upstream agent.
case "$1" in
init)
	echo '{"status":"Success","capabilities":{"attach":false}}'
	;;
mount)
	echo '{"status":"Success"}'
	;;
unmount)
	rm -rf "$2" && echo '{"status":"Success"}'
	;;
*)
	echo '{"status":"Not supported"}'
	exit 1
	;;
esac
`
