package execagent

import (
	"context"
	"fmt"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/nodeimpl/gates"
)

// APIServer has an agent of protocol v2 be the apiserver (the admit call,
// docs/exec-protocol.md): `--target exec:AGENT+reference` checks an out-of-process apiserver
// with the reference kubelet, `exec:AGENT+exec:AGENT` a whole out-of-process implementation.
type APIServer struct {
	*driver
}

// NewAPIServer checks the agent (newDriver).
func NewAPIServer(opts framework.TargetOptions) (*APIServer, error) {
	d, err := newDriver(opts, false)
	if err != nil {
		return nil, err
	}
	return &APIServer{driver: d}, nil
}

// Info names the agent and how it is driven.
func (a *APIServer) Info() framework.TargetInfo {
	return framework.TargetInfo{Name: Name, Details: a.details()}
}

// SupportsAdmission: what the agent cannot admit it says in its answer.
func (a *APIServer) SupportsAdmission(*framework.Case) (bool, string) { return true, "" }

// Admit asks the agent to admit c's pod (or update, or PersistentVolume).
func (a *APIServer) Admit(ctx context.Context, c *framework.Case) (framework.Admitted, error) {
	req := &execproto.AdmitRequest{
		Pod:                    c.Pod,
		OldPod:                 c.OldPod,
		PersistentVolume:       c.PersistentVolume,
		PreservePermissions:    c.PreservePermissions,
		OldPreservePermissions: c.OldPreservePermissions,
		APIServerGates:         allGates(gates.Set(c.Gates.APIServer)),
	}
	// fieldValidation came after v2's admit (da9900c) and matters only to an apiserver of a
	// release without a field the pod carries (docs/exec-protocol.md "admit"): an agent of the
	// newest release, as every vendor's is, is never sent it (issue 51).
	if c.Releases.Of(true) != framework.NewestRelease {
		req.FieldValidation = c.FieldValidation
	}
	if p := c.FlexVolumePolicy; p != nil {
		req.FlexVolumePolicy = &execproto.FlexVolumePolicy{AllowedVolumeTypes: p.AllowedVolumeTypes, AllowedDrivers: p.AllowedDrivers}
	}
	out, version, err := a.callMessage(ctx, execproto.Message{Op: execproto.OpAdmit, Admit: req})
	if err != nil {
		return framework.Admitted{}, err
	}
	return decodeAdmit(out, version, c.Pod != nil)
}

// decodeAdmit reads an agent's admit answer: one AdmitResponse of protocol version; an allowed
// pod comes back as stored, a refusal carries its texts.
func decodeAdmit(out []byte, version string, pod bool) (framework.Admitted, error) {
	var resp execproto.AdmitResponse
	if err := decode(out, &resp, version); err != nil {
		return framework.Admitted{}, fmt.Errorf("agent %s: %w", execproto.OpAdmit, err)
	}
	switch {
	case resp.Allowed && pod && resp.Pod == nil:
		return framework.Admitted{}, fmt.Errorf("agent admit allowed the pod but did not return it as stored")
	case !resp.Allowed && len(resp.Errors) == 0:
		return framework.Admitted{}, fmt.Errorf("agent admit refused without an error text")
	}
	adm := framework.Admitted{Admission: framework.Admission{Allowed: resp.Allowed, Errors: resp.Errors,
		Dropped: resp.Dropped, PreservePermissions: resp.PreservePermissions, Warnings: resp.Warnings}}
	if resp.Allowed {
		adm.Pod = resp.Pod
	}
	return adm, nil
}

// Close stops the serving agent and removes its work dir.
func (a *APIServer) Close() error {
	a.stop()
	return a.close()
}
