// Package agent is the reference node implementation (nodeimpl/kubelet) behind volperm's exec
// protocol: what `volperm agent` runs. Each call starts from a fresh kubelet, as after a kubelet
// restart, whether it is a process of its own or a line to `volperm agent serve`; what must
// survive between calls (ready markers) lives in the request's stateDir.
package agent

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
	"github.com/volperm/volperm/nodeimpl/selinux"
)

// Main answers one call, or serves (op "serve"), as the reference agent (execproto.Main).
func Main(op string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execproto.Main(reference{}, "volperm agent", op, stdin, stdout, stderr)
}

// reference is the reference node's execproto.Handler: Admit and Answer.
type reference struct{}

func (reference) Admit(req *execproto.AdmitRequest, version string) (*execproto.AdmitResponse, error) {
	return Admit(req, version)
}

func (reference) Answer(op string, req *execproto.Request, version string) (any, error) {
	return Answer(op, req, version)
}

// Features: the reference node implements every optional part of the protocol
// (docs/exec-protocol.md "Features"): it runs a pod with hostUsers: false in a user namespace
// of its own and answers its range (execproto.FeatureUserNamespaces), and so on.
func (reference) Features() []string {
	return []string{execproto.FeatureUserNamespaces, execproto.FeatureSupplementalGroupsPolicy, execproto.FeatureVolumeBindMountOptions, execproto.FeatureSELinuxMount, execproto.FeatureImageVolumes}
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
		Strict:                 req.FieldValidation == execproto.FieldValidationStrict,
	}
	if p := req.FlexVolumePolicy; p != nil {
		areq.FlexPolicy = &admission.FlexVolumePolicy{AllowedVolumeTypes: p.AllowedVolumeTypes, AllowedDrivers: p.AllowedDrivers}
	}
	res := admission.Admit(areq)
	return &execproto.AdmitResponse{ProtocolVersion: version, Allowed: res.Allowed, Errors: res.Errors,
		Dropped: res.Dropped, PreservePermissions: res.PreservePermissions, Pod: res.Pod, Warnings: res.Warnings}, nil
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
		// docs/spec.md [userns.runtime]: what the node's runtime lacks.
		NoUserNamespaces: slices.Contains(req.RuntimeLacks, string(framework.RuntimeUserNamespaces)),
		// docs/spec.md [groups.admit].
		NoSupplementalGroupsPolicy: slices.Contains(req.RuntimeLacks, string(framework.RuntimeSupplementalGroupsPolicy)),
		// docs/spec.md [mounts.bind-mount-options].
		NoMountOptions: slices.Contains(req.RuntimeLacks, string(framework.RuntimeMountOptions)),
	})
	if err != nil {
		return nil, err
	}
	pod := &kubelet.Pod{Pod: req.Pod, PreservePermissions: req.PreservePermissions, Sources: req.Sources}
	if s := req.SELinux; s != nil {
		pod.SELinux = &selinux.Node{Claims: s.Claims, CSIDrivers: s.CSIDrivers, Running: s.Running}
	}
	switch op {
	case execproto.OpSetUp:
		resp := execproto.SetUpResponse{ProtocolVersion: version}
		var rej *kubelet.Rejection
		if err := k.Admit(pod); errors.As(err, &rej) {
			resp.Rejected = &execproto.Rejection{Reason: rej.Reason, Message: rej.Message}
			return resp, nil
		}
		cs := k.ContainerSecurity(pod, 0)
		resp.Container = &execproto.ContainerSecurity{RunAsUser: cs.RunAsUser, RunAsGroup: cs.RunAsGroup, SupplementalGroups: cs.SupplementalGroups, Strict: cs.Strict}
		for _, r := range k.SetUp(pod) {
			vr := execproto.VolumeResult{Name: r.Name, OK: r.Err == nil, SELinuxMount: r.SELinuxMount}
			if r.Err != nil {
				vr.Error = r.Err.Error()
			}
			resp.Volumes = append(resp.Volumes, vr)
		}
		if framework.InUserNamespace(req.Pod) {
			// The kubelet's range for the pod: allocated on the first setup and recorded in the
			// pod's directory (below stateDir), read back by every later one.
			m, err := k.UserNamespace(pod)
			var se *kubelet.SandboxError
			if errors.As(err, &se) {
				resp.SandboxError = se.Msg
				return resp, nil
			}
			if err != nil {
				return nil, err
			}
			resp.UserNamespace = &execproto.UserNamespace{HostID: m.HostID, Length: m.Length}
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
