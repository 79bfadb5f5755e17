// Package incontainer is what runs inside the container target's containers: the static probe
// binary's whole program. Given a Request it snapshots the volumes as the container sees them
// and runs probe ops as the process's own identity (the container's user), and prints the
// answer as an Observation (volumes[].paths and probes only). It also keeps a container alive.
package incontainer

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/snapshot"
)

// Request is what one run of the probe binary does: snapshot Volumes first, then run Probes in
// order. Paths are as the container sees them.
type Request struct {
	Volumes []Volume     `json:"volumes,omitempty"`
	Probes  []probe.Step `json:"probes,omitempty"`
}

// Volume is one volume to snapshot at Path.
type Volume struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Root observes only the root, following symlinks (hostPath); otherwise the whole tree.
	Root bool `json:"root,omitempty"`
}

// Usage is the command line ProbeMain understands.
const Usage = `usage: volperm-probe [-request JSON]   run a Request (from -request, else stdin), print an Observation
       volperm-probe -wait              block until SIGTERM or SIGINT (a container's main process)`

// ProbeMain is the probe binary's main (and `volperm probe`'s): it returns the exit code, 0 on
// success, 1 when the request could not be run, 2 for a bad command line. Errors go to stderr.
func ProbeMain(args []string, stdin io.Reader, stdout io.Writer) int {
	fs := flag.NewFlagSet("volperm-probe", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, Usage) }
	reqArg := fs.String("request", "", "the Request as JSON (default: read it from stdin)")
	wait := fs.Bool("wait", false, "block until SIGTERM or SIGINT")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*wait && *reqArg != "") {
		fs.Usage()
		return 2
	}
	if *wait {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		return 0
	}
	var req Request
	var err error
	if *reqArg != "" {
		err = json.Unmarshal([]byte(*reqArg), &req)
	} else {
		err = json.NewDecoder(stdin).Decode(&req)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "volperm-probe: read request: %v\n", err)
		return 2
	}
	obs, err := Run(req)
	if err != nil {
		fmt.Fprintf(os.Stderr, "volperm-probe: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(obs); err != nil {
		fmt.Fprintf(os.Stderr, "volperm-probe: write answer: %v\n", err)
		return 1
	}
	return 0
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

// Run runs req as this process's identity.
func Run(req Request) (*framework.Observation, error) {
	vols, err := Snapshot(req.Volumes)
	if err != nil {
		return nil, err
	}
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Volumes: vols}
	if len(req.Probes) > 0 {
		// docs/spec.md "Probes": processes in the pod run with umask 022.
		old := syscall.Umask(022)
		defer syscall.Umask(old)
		for _, s := range req.Probes {
			obs.Probes = append(obs.Probes, probe.Do(s.Root, s.Probe))
		}
	}
	return obs, nil
}
