package cluster

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/fixturedriver"
	"github.com/volperm/volperm/framework/needs"
)

// Supports says whether the cluster runs c: its apiserver half (the gates, the cell, the
// object), then, for a case that reaches the node, its kubelet half (asked once per case: a
// prepared case was).
func (t *Target) Supports(c *framework.Case) (bool, string) { return t.pair.Supports(c) }

// NotApplicable says why c is not a case of this cluster, "" when it is
// (framework.NotApplicable; docs/certify.md "Not applicable"): a cell of releases it does not
// run, a need of framework/needs its nodes do not meet (volperm cannot show it on a real
// cluster, runtime-defined hostPaths among them, or it is a case of another kind of node:
// another side of a runtime capability, huge pages).
func (t *Target) NotApplicable(c *framework.Case) string {
	if why := framework.NotApplicable(t.pair, c); why != "" {
		return why
	}
	if n, lacks := needs.NotOnClusters(c, t.met()...); lacks {
		return n.Label + ": " + n.Reason
	}
	return ""
}

// ReleasesMismatch says how the releases of c's cell differ from those a cluster's apiserver
// and kubelet report, versions as v1.N.P ("" = none).
// A case whose steps replace the kubelet is compared by the releases it is observed under
// (framework.ObservedReleases): the node's own release is where its history ends.
func ReleasesMismatch(c *framework.Case, apiserver, kubelet string) string {
	r := framework.ObservedReleases(c)
	if r.APIServer == framework.MinorRelease(apiserver) && r.Kubelet == framework.MinorRelease(kubelet) {
		return ""
	}
	return fmt.Sprintf("needs kube-apiserver %s and kubelet %s; the cluster runs kube-apiserver %s and kubelet %s", r.APIServer, r.Kubelet, apiserver, kubelet)
}

// Releases are the releases of the cluster's apiserver and the node's kubelet, when volperm
// knows them (framework.SupportedReleases; "" otherwise): framework.RunAsReleases makes the cases
// that name none cells of these.
func (t *Target) Releases() framework.Releases {
	known := func(v string) string {
		if m := framework.MinorRelease(v); slices.Contains(framework.SupportedReleases, m) {
			return m
		}
		return ""
	}
	return framework.Releases{APIServer: known(t.version), Kubelet: known(t.kubeletVersion)}
}

// Runnable says whether a stock cluster can run c at all, whatever its gates; flexDriver says
// whether the harness's flexVolume driver is installed on the node (Options.InstallFlexDriver),
// met the labels of the node needs (framework/needs) its nodes meet beyond a stock node's.
func Runnable(c *framework.Case, flexDriver bool, met ...string) (bool, string) {
	if ok, why := admissible(c); !ok {
		return false, why
	}
	return settable(c, flexDriver, met...)
}

// admissible says whether the target can send c's objects to a v1 apiserver as c means them: a
// real apiserver has none of the apiserver needs of framework/needs' table (their reasons: its
// ServiceAccount admission plugin names a pod's service account before validation, say).
func admissible(c *framework.Case) (bool, string) {
	if n, lacks := needs.Half(c, false); lacks {
		return false, n.Reason
	}
	return true, ""
}

// settable says whether a node sets up c's volumes; flexDriver and met as for Runnable.
func settable(c *framework.Case, flexDriver bool, met ...string) (bool, string) {
	if c.Pod == nil || c.AdmissionOnly {
		return true, ""
	}
	// A stock node has none of the node needs of framework/needs' table; met are those it has.
	if n, lacks := needs.Half(c, true, met...); lacks {
		return false, n.Reason
	}
	for _, v := range c.Pod.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
		case v.HostPath != nil, v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil:
		case v.VolumeSource == (corev1.VolumeSource{}):
			// The apiserver makes it an emptyDir (v1.37 SetDefaults_Volume).
		case v.FlexVolume != nil:
			switch {
			case v.FlexVolume.Driver != fixturedriver.Driver:
				return false, fmt.Sprintf("flexVolume driver %q: only the harness's driver %s is set up by this target", v.FlexVolume.Driver, fixturedriver.Driver)
			case !flexDriver:
				return false, "flexVolume set-up needs the harness's driver " + fixturedriver.Driver + " on the node (the kind target installs it; cluster:flex-driver does on your cluster)"
			}
		case v.Image != nil:
			if v.Image.Reference != framework.ProbeImage {
				return false, fmt.Sprintf("image volume %q: only the probe image (reference %s) is on the node", v.Image.Reference, framework.ProbeImage)
			}
		case v.Projected != nil:
			for _, p := range v.Projected.Sources {
				if p.Secret == nil && p.ConfigMap == nil && p.DownwardAPI == nil && p.ServiceAccountToken == nil &&
					p.ClusterTrustBundle == nil && p.PodCertificate == nil { // those two: needs.PodCredentials
					return false, "only secret, configMap, downwardAPI and serviceAccountToken projections are set up by this target"
				}
			}
		default:
			return false, "only emptyDir, hostPath, secret, configMap, downwardAPI, projected, image (the probe image) and the harness's flexVolume volumes are set up by this target"
		}
	}
	return true, ""
}
