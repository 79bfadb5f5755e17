package oracle

import (
	corev1 "k8s.io/api/core/v1"
)

// The pod's FsUser (docs/spec.md [atomicwriter.token]): the owner the kubelet gives the files
// of projected serviceAccountToken, clusterTrustBundle and podCertificate sources.

// fsUserOf is v1.37 pkg/volume/util FsUserFrom: the effective runAsUser
// (securitycontext.DetermineEffectiveRunAsUser: the container's over the pod's) shared by every
// container, init and ephemeral included (podutil.AllFeatureEnabledContainers); nil when one
// container has none or two differ; runAsUser 0 is an FsUser like any other. With it
// rule.FsUser's value: "none" (no container has a runAsUser, or
// the pod has no container), "partial" (some container has none), "mixed" (two differ), "root"
// (all 0), "one" (all the same non-zero uid).
func fsUserOf(pod *corev1.Pod) (*int64, string) {
	var out *int64
	seen, missing := 0, 0
	mixed := false
	visit := func(c *corev1.SecurityContext) {
		var u *int64
		if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if c != nil && c.RunAsUser != nil {
			u = c.RunAsUser
		}
		switch {
		case u == nil:
			missing++
		case out == nil:
			out = u
			seen++
		default:
			seen++
			mixed = mixed || *out != *u
		}
	}
	// podutil.VisitContainers order: init containers, containers, ephemeral containers.
	for i := range pod.Spec.InitContainers {
		visit(pod.Spec.InitContainers[i].SecurityContext)
	}
	for i := range pod.Spec.Containers {
		visit(pod.Spec.Containers[i].SecurityContext)
	}
	for i := range pod.Spec.EphemeralContainers {
		visit(pod.Spec.EphemeralContainers[i].SecurityContext)
	}
	switch {
	case seen == 0:
		return nil, "none"
	case missing > 0:
		return nil, "partial"
	case mixed:
		return nil, "mixed"
	case *out == 0:
		v := *out
		return &v, "root"
	}
	v := *out
	return &v, "one"
}

// resolveFsUser is v1.37 projected.go resolveFsUser: the pod's FsUser; with the kubelet's
// AtomicWriteVolumeUserFields gate on, the volume's defaultUser over it and the source's user
// over both. from is rule.UserFrom for the owner chosen.
func resolveFsUser(fsUser *int64, gateOn bool, defaultUser, itemUser *int64) (owner *int64, from string) {
	owner, from = fsUser, setOr(fsUser != nil, userFromRunAsUser, userFromNone)
	if gateOn {
		if defaultUser != nil {
			owner, from = defaultUser, userFromDefault
		}
		if itemUser != nil {
			owner, from = itemUser, userFromToken
		}
	}
	return owner, from
}
