//go:build volperm_k8s_pre_1_36

package main

import (
	"errors"

	"github.com/volperm/volperm/framework/execproto"
)

// agentFeatures: before v1.36 the kubelet's user-namespace manager has another API (v1.34:
// MakeUserNsManager(kl) with GetUserNamespacesIDsPerPod; v1.35: GetKubeletMappings(idsPerPod)
// and a context to GetOrCreateUserNamespaceMappings), which this agent does not call: it lists
// no feature, and the harness does not run a pod with hostUsers: false on it (docs/releases.md
// "Drift").
var agentFeatures []string

func (n *node) userNamespace() (*execproto.UserNamespace, error) {
	if n.pod.Spec.HostUsers == nil || *n.pod.Spec.HostUsers {
		return nil, nil
	}
	return nil, errors.New("this agent does not run the user-namespace manager of Kubernetes before v1.36")
}
