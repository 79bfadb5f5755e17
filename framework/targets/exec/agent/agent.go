// Package agent is the reference node implementation (nodeimpl/kubelet) behind volperm's exec
// protocol: what `volperm agent` runs. Each call is a fresh process, as after a kubelet
// restart; what must survive between calls (ready markers) lives in the request's stateDir.
package agent

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Main answers one call: op is "setup" or "teardown", the request is read from stdin and the
// answer written to stdout. It returns the process's exit status: 0 whenever it answered
// (a failed volume is an answer), 2 for a request it cannot read.
func Main(op string, stdin io.Reader, stdout, stderr io.Writer) int {
	var req execproto.Request
	dec := json.NewDecoder(stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(stderr, "volperm agent: read request: %v\n", err)
		return 2
	}
	if req.ProtocolVersion != execproto.Version {
		fmt.Fprintf(stderr, "volperm agent: request in protocol %q; this agent speaks %q\n", req.ProtocolVersion, execproto.Version)
		return 2
	}
	if req.Pod == nil {
		fmt.Fprintln(stderr, "volperm agent: request has no pod")
		return 2
	}
	dirs := map[string]string{}
	for _, v := range req.Volumes {
		dirs[v.Name] = v.Dir
	}
	k, err := kubelet.New(kubelet.Config{
		RootDir:    req.StateDir,
		HostRoot:   req.HostRoot,
		Gates:      knownGates(req.KubeletGates),
		VolumeDirs: dirs,
	})
	if err != nil {
		fmt.Fprintf(stderr, "volperm agent: %v\n", err)
		return 2
	}
	pod := &kubelet.Pod{Pod: req.Pod, PreservePermissions: req.PreservePermissions, Sources: req.Sources}
	var answer any
	switch op {
	case execproto.OpSetUp:
		resp := execproto.SetUpResponse{ProtocolVersion: execproto.Version}
		for _, r := range k.SetUp(pod) {
			vr := execproto.VolumeResult{Name: r.Name, OK: r.Err == nil}
			if r.Err != nil {
				vr.Error = r.Err.Error()
			}
			resp.Volumes = append(resp.Volumes, vr)
		}
		answer = resp
	case execproto.OpTearDown:
		resp := execproto.TearDownResponse{ProtocolVersion: execproto.Version, OK: true}
		if err := k.TearDown(pod); err != nil {
			resp.OK, resp.Error = false, err.Error()
		}
		answer = resp
	default:
		fmt.Fprintf(stderr, "volperm agent: unknown operation %q: use %s or %s\n", op, execproto.OpSetUp, execproto.OpTearDown)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(answer); err != nil {
		fmt.Fprintf(stderr, "volperm agent: write answer: %v\n", err)
		return 2
	}
	return 0
}

// knownGates keeps the gates this node knows; the harness may know more than an agent does.
func knownGates(in map[string]bool) gates.Set {
	out := gates.Set{}
	for name, on := range in {
		if _, known := gates.Defaults[name]; known {
			out[name] = on
		}
	}
	return out
}
