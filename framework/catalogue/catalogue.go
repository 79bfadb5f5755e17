// Package catalogue is every case volperm runs: the canonical cases under manifests/cases and
// the sweeps and matrices generated in code, in one stable order.
package catalogue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	caseneeds "github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/manifests"
)

// generators build the cases of each area that are generated in code.
var generators = []func() []*framework.Case{
	emptyDirCases, hostPathCases, fsGroupCases, atomicWriterCases, ownerCases, flexVolumeCases, skewCases, conditionCases, ruleCases, userPainCases, fsUserCases, absentObjectCases, boundaryCases,
}

// All returns the whole catalogue, each case Complete()d, names unique: per area (in
// framework.Areas order) the canonical manifests first, then the generated cases. Every call
// builds fresh cases, so callers may change them.
func All() []*framework.Case {
	cases := manifestCases()
	for _, g := range generators {
		cases = append(cases, g()...)
	}
	rank := map[framework.Area]int{}
	for i, a := range framework.Areas {
		rank[a] = i
	}
	sort.SliceStable(cases, func(i, j int) bool { return rank[cases[i].Area] < rank[cases[j].Area] })
	for _, c := range cases {
		c.Complete()
		c.Labels = append(c.Labels, needs(c)...)
	}
	return cases
}

// Labels naming what a case needs beyond a stock v1.37 cluster, so that a run on real nodes
// can leave such cases out (--label-filter '!hugepages'), with runtime-defined (hostpath.go).
const (
	// LabelHugePages: an emptyDir on a HugePages medium needs huge pages allocated on the node.
	LabelHugePages = "hugepages"
	// LabelPreservePermissions: the proposed field (seed 002) is not in the v1 API, nor its
	// gate in Kubernetes.
	LabelPreservePermissions = "preserve-permissions"
	// LabelPodUpdate: an update of a pod's volumes (Case.OldPod); v1 pod volumes are immutable,
	// only workload templates change.
	LabelPodUpdate = "pod-update"
	// LabelSourceUpdate: an update of the data of a secret or configMap (an updateSources
	// step); a cluster's kubelet applies it at its next sync, up to a minute later, which the
	// cluster target does not wait for.
	LabelSourceUpdate = "source-update"
	// LabelFsUserProbes: a token whose pod runs as one uid other than 0, probed as another user.
	// On a cluster the probe pod's containers must all run as that uid, so that the kubelet
	// gives the token the same owner, and cannot switch users (framework/needs FsUserProbes).
	LabelFsUserProbes = "fs-user-probes"
)

// needs is the labels above that c carries.
func needs(c *framework.Case) []string {
	var out []string
	if c.Pod != nil {
		for _, v := range c.Pod.Spec.Volumes {
			if v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), "HugePages") {
				out = append(out, LabelHugePages)
				break
			}
		}
	}
	if len(c.PreservePermissions) > 0 || len(c.OldPreservePermissions) > 0 ||
		c.Gates.APIServer[framework.GatePreservePermissions] || c.Gates.Kubelet[framework.GatePreservePermissions] {
		out = append(out, LabelPreservePermissions)
	}
	if c.OldPod != nil {
		out = append(out, LabelPodUpdate)
	}
	if framework.UpdatesSources(c) {
		out = append(out, LabelSourceUpdate)
	}
	if c.Pod != nil {
		if caseneeds.FsUserProbes(c) != "" {
			out = append(out, LabelFsUserProbes)
		}
		for _, v := range c.Pod.Spec.Volumes {
			if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(p corev1.VolumeProjection) bool { return p.ClusterTrustBundle != nil || p.PodCertificate != nil }) {
				out = append(out, LabelPodCredentials)
				break
			}
		}
	}
	return out
}

// Filter returns the cases of area, in their order.
func Filter(cases []*framework.Case, area framework.Area) []*framework.Case {
	var out []*framework.Case
	for _, c := range cases {
		if c.Area == area {
			out = append(out, c)
		}
	}
	return out
}

// manifestCases parses the embedded canonical cases. They are part of the program: a parse error
// is a bug in the build, not an input error.
func manifestCases() []*framework.Case {
	files, err := fs.Glob(manifests.Cases, "cases/*.yaml")
	if err != nil {
		panic(err)
	}
	var cases []*framework.Case
	for _, f := range files {
		data, err := fs.ReadFile(manifests.Cases, f)
		if err != nil {
			panic(err)
		}
		cs, err := framework.LoadCases(path.Join("manifests", f), data, framework.Gates{})
		if err != nil {
			panic(err)
		}
		cases = append(cases, cs...)
	}
	return cases
}

// Digest is the sha256 of the whole catalogue (every case as JSON, in order): a
// ConformanceReport names the catalogue it ran by it (framework/certify), and a verifier
// compares it with its own.
func Digest() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, c := range All() {
		if err := enc.Encode(c); err != nil {
			panic(fmt.Sprintf("catalogue case %q: %v", c.Name, err))
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
