// Command probebin is the program of the cluster target's probe image (/volperm-probe in
// volperm/probe:<tag>). In a pod's container, running as root, it keeps the container alive
// (-wait), creates host fixtures under a node directory (-fixtures), changes a mode (-chmod), or
// snapshots volumes and runs probes each as its case's user (-request), printing JSON on stdout,
// or installs itself as the harness's flexVolume driver (-install-driver), which it then is
// when called as "fixture".
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/targets/container/incontainer"
	"github.com/volperm/volperm/framework/targets/fixturedriver"
)

// Request is one -request run: snapshot Volumes, then run Probes in order, each as its user
// (the container target's request, whose probes run as the container's own user instead).
type Request = incontainer.Request

// Chmod is one -chmod run: a container changing a mode (Case.After chmod steps).
type Chmod struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
}

// Fixtures is one -fixtures run: create Objects under Root (hostfix.Create).
type Fixtures struct {
	Root    string                 `json:"root"`
	Objects []framework.HostObject `json:"objects"`
}

func main() {
	probe.MaybeRunChild()
	// Installed in a kubelet's plugin dir (-install-driver), the program is the harness's
	// flexVolume driver.
	if filepath.Base(os.Args[0]) == fixturedriver.Program {
		os.Exit(fixturedriver.Main(os.Args[1:], os.Stdout))
	}
	os.Exit(run(os.Args[1:], os.Stdout))
}

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

func run(args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("volperm-probe", flag.ContinueOnError)
	wait := fs.Bool("wait", false, "block until SIGTERM or SIGINT")
	request := fs.String("request", "", "a Request as JSON (- reads it from stdin): print the Observation")
	fixtures := fs.String("fixtures", "", "a Fixtures as JSON: create them")
	chmod := fs.String("chmod", "", "a Chmod as JSON: change the mode")
	driver := fs.String("install-driver", "", "a kubelet flexVolume plugin dir: install this program as the volperm/fixture driver")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	switch {
	case *wait:
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		return 0
	case *driver != "":
		if err := installDriver(*driver); err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: install driver: %v\n", err)
			return 1
		}
		return 0
	case *fixtures != "":
		var f Fixtures
		if err := json.Unmarshal([]byte(*fixtures), &f); err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: fixtures: %v\n", err)
			return 2
		}
		if err := hostfix.Create(f.Root, f.Objects); err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: %v\n", err)
			return 1
		}
		return 0
	case *chmod != "":
		var c Chmod
		if err := json.Unmarshal([]byte(*chmod), &c); err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: chmod: %v\n", err)
			return 2
		}
		// syscall.Chmod, not os.Chmod: the setuid, setgid and sticky bits are taken as given.
		if err := syscall.Chmod(c.Path, c.Mode); err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: chmod %s: %v\n", c.Path, err)
			return 1
		}
		return 0
	case *request != "":
		var req Request
		var err error
		if *request == "-" {
			err = json.NewDecoder(os.Stdin).Decode(&req)
		} else {
			err = json.Unmarshal([]byte(*request), &req)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: request: %v\n", err)
			return 2
		}
		obs, err := observe(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "volperm-probe: %v\n", err)
			return 1
		}
		if err := json.NewEncoder(stdout).Encode(obs); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "usage: volperm-probe -wait | -request JSON | -fixtures JSON | -chmod JSON | -install-driver DIR")
	return 2
}

func observe(req Request) (*framework.Observation, error) {
	vols, err := incontainer.Snapshot(req.Volumes)
	if err != nil {
		return nil, err
	}
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Volumes: vols}
	roots := map[string]string{}
	probes := make([]framework.Probe, 0, len(req.Probes))
	for _, s := range req.Probes {
		roots[s.Probe.Volume] = s.Root
		probes = append(probes, s.Probe)
	}
	// docs/spec.md "Probes": each probe is one syscall as (uid, gid, groups), in a child
	// process with exactly those credentials (the pod's fsGroup is not added).
	res, err := probe.Run(context.Background(), probes, roots)
	if err != nil {
		return nil, err
	}
	obs.Probes = res
	return obs, nil
}
