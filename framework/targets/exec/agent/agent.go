// Package agent is the reference node implementation (nodeimpl/kubelet) behind volperm's exec
// protocol: what `volperm agent` runs. Each call starts from a fresh kubelet, as after a kubelet
// restart, whether it is a process of its own or a line to `volperm agent serve`; what must
// survive between calls (ready markers) lives in the request's stateDir.
package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Main answers one call: op is "setup" or "teardown", the request is read from stdin and the
// answer written to stdout; op "serve" is the long-lived mode (Serve). It returns the process's
// exit status: 0 whenever it answered (a failed volume is an answer), 2 for a request it cannot
// read.
func Main(op string, stdin io.Reader, stdout, stderr io.Writer) int {
	if op == execproto.OpServe {
		return Serve(stdin, stdout, stderr)
	}
	dec := json.NewDecoder(stdin)
	dec.DisallowUnknownFields()
	var answer any
	var err error
	if op == execproto.OpAdmit {
		var req execproto.AdmitRequest
		if err := dec.Decode(&req); err != nil {
			fmt.Fprintf(stderr, "volperm agent: read request: %v\n", err)
			return 2
		}
		answer, err = Admit(&req, execproto.VersionServe)
	} else {
		var req execproto.Request
		if err := dec.Decode(&req); err != nil {
			fmt.Fprintf(stderr, "volperm agent: read request: %v\n", err)
			return 2
		}
		answer, err = Answer(op, &req, execproto.Version)
	}
	if err != nil {
		fmt.Fprintf(stderr, "volperm agent: %v\n", err)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(answer); err != nil {
		fmt.Fprintf(stderr, "volperm agent: write answer: %v\n", err)
		return 2
	}
	return 0
}

// Serve is `volperm agent serve`: it answers hello, setup and teardown messages, one JSON line
// each, until stdin closes (docs/exec-protocol.md "Long-lived mode"). Every call builds a fresh
// kubelet from the request, as Main does, so that serving changes nothing a case observes.
func Serve(stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	enc := json.NewEncoder(stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return 0 // stdin closed: the run is over
			}
			continue
		}
		var m execproto.Message
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			fmt.Fprintf(stderr, "volperm agent: read message: %v\n", err)
			return 2
		}
		var answer any
		switch {
		case m.ProtocolVersion != execproto.VersionServe:
			fmt.Fprintf(stderr, "volperm agent: message in protocol %q; serving speaks %q\n", m.ProtocolVersion, execproto.VersionServe)
			return 2
		case m.Op == execproto.OpHello:
			answer = execproto.Hello{ProtocolVersion: execproto.VersionServe, Op: execproto.OpHello}
		case m.Op == execproto.OpAdmit && m.Admit != nil:
			if answer, err = Admit(m.Admit, execproto.VersionServe); err != nil {
				fmt.Fprintf(stderr, "volperm agent: %v\n", err)
				return 2
			}
		case m.Request == nil:
			fmt.Fprintf(stderr, "volperm agent: %s message without a request\n", m.Op)
			return 2
		default:
			if answer, err = Answer(m.Op, m.Request, execproto.VersionServe); err != nil {
				fmt.Fprintf(stderr, "volperm agent: %v\n", err)
				return 2
			}
		}
		if err := enc.Encode(answer); err != nil {
			fmt.Fprintf(stderr, "volperm agent: write answer: %v\n", err)
			return 2
		}
	}
}

// Admit is the reference apiserver's answer (nodeimpl/admission) to an admit request of
// protocol version (v2 only: v1 has no admit).
func Admit(req *execproto.AdmitRequest, version string) (*execproto.AdmitResponse, error) {
	if req.ProtocolVersion != version {
		return nil, fmt.Errorf("admit request in protocol %q; this agent speaks %q here", req.ProtocolVersion, version)
	}
	areq := admission.Request{
		Pod:                    req.Pod,
		OldPod:                 req.OldPod,
		PersistentVolume:       req.PersistentVolume,
		PreservePermissions:    req.PreservePermissions,
		OldPreservePermissions: req.OldPreservePermissions,
		Gates:                  knownGates(req.APIServerGates),
	}
	if p := req.FlexVolumePolicy; p != nil {
		areq.FlexPolicy = &admission.FlexVolumePolicy{AllowedVolumeTypes: p.AllowedVolumeTypes, AllowedDrivers: p.AllowedDrivers}
	}
	res := admission.Admit(areq)
	return &execproto.AdmitResponse{ProtocolVersion: version, Allowed: res.Allowed, Errors: res.Errors,
		Dropped: res.Dropped, PreservePermissions: res.PreservePermissions, Pod: res.Pod}, nil
}

// Answer is the reference node's answer to one setup or teardown request of protocol version;
// an error means the request cannot be answered at all.
func Answer(op string, req *execproto.Request, version string) (any, error) {
	if req.ProtocolVersion != version {
		return nil, fmt.Errorf("request in protocol %q; this agent speaks %q here", req.ProtocolVersion, version)
	}
	if req.Pod == nil {
		return nil, fmt.Errorf("request has no pod")
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
		return nil, err
	}
	pod := &kubelet.Pod{Pod: req.Pod, PreservePermissions: req.PreservePermissions, Sources: req.Sources}
	switch op {
	case execproto.OpSetUp:
		resp := execproto.SetUpResponse{ProtocolVersion: version}
		for _, r := range k.SetUp(pod) {
			vr := execproto.VolumeResult{Name: r.Name, OK: r.Err == nil}
			if r.Err != nil {
				vr.Error = r.Err.Error()
			}
			resp.Volumes = append(resp.Volumes, vr)
		}
		return resp, nil
	case execproto.OpTearDown:
		resp := execproto.TearDownResponse{ProtocolVersion: version, OK: true}
		if err := k.TearDown(pod); err != nil {
			resp.OK, resp.Error = false, err.Error()
		}
		return resp, nil
	}
	return nil, fmt.Errorf("unknown operation %q: use %s, %s or %s", op, execproto.OpSetUp, execproto.OpTearDown, execproto.OpServe)
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
