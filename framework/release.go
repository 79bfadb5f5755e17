package framework

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is one Kubernetes minor release volperm knows (docs/spec.md "Releases"): the table
// every target, agent build and node image reads (issue 35: one table per concept).
type Release struct {
	// Minor is the release as cases name it: "v1.37".
	Minor string
	// Patch is the patch release of it that volperm builds and runs (agents, kubelets, node
	// images): the newest seen on the module proxy. The newest minor's is the default of
	// `upstream`, of the kind node image and of agents/upstream/go.mod (a test checks).
	Patch string
}

// releaseTable is every supported release, oldest first; the last is the newest.
var releaseTable = []Release{
	{Minor: "v1.34", Patch: "v1.34.4"},
	{Minor: "v1.35", Patch: "v1.35.4"},
	{Minor: "v1.36", Patch: "v1.36.3"},
	{Minor: "v1.37", Patch: "v1.37.1"},
}

// ReleaseTable lists the supported releases, oldest first.
func ReleaseTable() []Release { return slices.Clone(releaseTable) }

// The Kubernetes releases volperm knows: the minor releases the module proxy holds, oldest
// first. A cell of the release-skew matrix names the apiserver's and the kubelet's release; a
// component of a release without a field or a gate behaves as the KEP's "gate off" row says.
var SupportedReleases = func() []string {
	var out []string
	for _, r := range releaseTable {
		out = append(out, r.Minor)
	}
	return out
}()

// NewestRelease is the release a component runs when a case names none.
var NewestRelease = releaseTable[len(releaseTable)-1].Minor

// NewestPatch is the patch release of NewestRelease volperm builds and runs by default.
var NewestPatch = releaseTable[len(releaseTable)-1].Patch

// PatchReleases are the patch releases of releaseTable, oldest first.
func PatchReleases() []string {
	var out []string
	for _, r := range releaseTable {
		out = append(out, r.Patch)
	}
	return out
}

// MaxKubeletSkew is how many minor releases a kubelet may be older than its kube-apiserver
// (kubernetes.io/releases/version-skew-policy); it must never be newer.
const MaxKubeletSkew = 3

// FieldEmptyDirMode is the API field KEP-5502 adds, as a path below a volume.
const FieldEmptyDirMode = "emptyDir.mode"

// FieldUser stands for KEP-5936's fields (defaultUser, item user) in firstRelease.
const FieldUser = "user"

// FieldClusterTrustBundle and FieldPodCertificate stand for the projected sources of those names
// in firstRelease: GA and on by default from v1.37 (ClusterTrustBundleProjection,
// PodCertificateRequest; v1.37 pkg/features/kube_features.go), off by default before.
const (
	FieldClusterTrustBundle = "clusterTrustBundle"
	FieldPodCertificate     = "podCertificate"
)

// FieldImageVolume stands for the image volume source in firstRelease: its gate ImageVolume is
// on by default from v1.35 (beta), GA and locked from v1.36 (v1.37 pkg/features); a v1.34
// apiserver drops the source.
const FieldImageVolume = "image"

// firstRelease is the first release that has each API field volperm knows (gates: gateTable's
// First): KEP-5502's emptyDir mode and KEP-5936's fields, alpha in v1.37; the clusterTrustBundle
// and podCertificate projections, on by default from v1.37.
var firstRelease = map[string]string{
	FieldEmptyDirMode:       "v1.37",
	FieldUser:               "v1.37",
	FieldClusterTrustBundle: "v1.37",
	FieldPodCertificate:     "v1.37",
	FieldImageVolume:        "v1.35",
}

// Releases are the releases of a cell's two components; "" is NewestRelease.
type Releases struct {
	// APIServer is the kube-apiserver's release, vMAJOR.MINOR ("" = the newest).
	APIServer string `json:"apiserver,omitempty"`
	// Kubelet is the kubelet's release, vMAJOR.MINOR ("" = the newest).
	Kubelet string `json:"kubelet,omitempty"`
}

// Of returns the release of the apiserver (api true) or the kubelet, NewestRelease when unset.
func (r Releases) Of(api bool) string {
	v := r.Kubelet
	if api {
		v = r.APIServer
	}
	if v == "" {
		return NewestRelease
	}
	return v
}

// Skewed reports whether a component of r runs an older release than the newest.
func (r Releases) Skewed() bool {
	return r.Of(true) != NewestRelease || r.Of(false) != NewestRelease
}

// ReleaseHas reports whether release has the field (FieldEmptyDirMode) or gate named what.
func ReleaseHas(release, what string) bool {
	first, ok := firstRelease[what]
	if g, gate := GateNamed(what); gate {
		first, ok = g.First, true
	}
	return ok && ReleaseMinor(release) >= ReleaseMinor(first)
}

// ReleaseMinor is the minor number of "v1.N" or "v1.N.P" (-1 when it is not one).
func ReleaseMinor(r string) int {
	rest, ok := strings.CutPrefix(r, "v1.")
	if !ok {
		return -1
	}
	rest, _, _ = strings.Cut(rest, ".") // the patch release, if any
	n, err := strconv.Atoi(rest)
	if err != nil {
		return -1
	}
	return n
}

// MinorRelease is the "v1.N" of a version "v1.N" or "v1.N.P[-...]": the release as cases name it.
func MinorRelease(version string) string { return fmt.Sprintf("v1.%d", ReleaseMinor(version)) }

// validate says what is wrong with r: an unknown release, or a kubelet newer than its apiserver
// or more than MaxKubeletSkew minors older.
func (r Releases) validate() error {
	for _, c := range []struct{ field, v string }{{"releases.apiserver", r.APIServer}, {"releases.kubelet", r.Kubelet}} {
		if c.v != "" && !slices.Contains(SupportedReleases, c.v) {
			return fmt.Errorf("%s: unknown release %q; use one of %s", c.field, c.v, strings.Join(SupportedReleases, ", "))
		}
	}
	api, kubelet := ReleaseMinor(r.Of(true)), ReleaseMinor(r.Of(false))
	switch {
	case kubelet > api:
		return fmt.Errorf("releases: kubelet %s is newer than kube-apiserver %s, which the version-skew policy forbids", r.Of(false), r.Of(true))
	case api-kubelet > MaxKubeletSkew:
		return fmt.Errorf("releases: kubelet %s is more than %d minor releases older than kube-apiserver %s, which the version-skew policy forbids", r.Of(false), MaxKubeletSkew, r.Of(true))
	}
	return nil
}

// The labels of the release-skew cells whose apiserver or kubelet is older than the newest
// release (docs/spec.md "Releases"): they run where a half can be that release (the reference
// simulates every one); a target of one release leaves them out by label. LabelOldAPIServer and
// LabelOldKubelet say which component is older: upstream+reference (the real v1.37 apiserver)
// runs the cells of an older kubelet with '!old-apiserver', kind@matrix (workers of older
// kubelets under a v1.37 control plane) the same. RunAsReleases labels the cells it makes too.
const (
	LabelReleaseSkew  = "release-skew"
	LabelOldAPIServer = "old-apiserver"
	LabelOldKubelet   = "old-kubelet"
)

// SkewLabels are the labels of a cell of releases r (none for the newest x the newest).
func SkewLabels(r Releases) []string {
	if !r.Skewed() {
		return nil
	}
	labels := []string{LabelReleaseSkew}
	if r.Of(true) != NewestRelease {
		labels = append(labels, LabelOldAPIServer)
	}
	if r.Of(false) != NewestRelease {
		labels = append(labels, LabelOldKubelet)
	}
	return labels
}

// FieldValidationStrict is Case.FieldValidation for a client that asks for strict field
// validation (kubectl's default); "" is Warn, what client-go sends.
const FieldValidationStrict = "Strict"

// NotInReleases says why c cannot exist in the releases of target, a pair of one older release
// (Releases()): c names no releases and sets a gate those releases lack, which they refuse as
// a flag, so RunAsReleases left it as it is. "" when c can be a cell of them, names its own
// releases, or target is of the newest releases. Such a case is not run even where every case
// is required: it is not one the target fails to run but one its releases cannot have
// (docs/releases.md "What a release means").
func NotInReleases(target Target, c *Case) string {
	rt, ok := target.(interface{ Releases() Releases })
	if !ok || c.Releases != (Releases{}) {
		return ""
	}
	r := rt.Releases()
	if !r.Skewed() {
		return ""
	}
	cell := c.DeepCopy()
	cell.Releases = r
	if err := cell.validateReleases(); err != nil {
		return fmt.Sprintf("not a case of kube-apiserver %s x kubelet %s, the releases of this target: %v", r.Of(true), r.Of(false), err)
	}
	return ""
}

// NotApplicable says why c is not a case of target's releases, "" when it is: a cell target's
// releases cannot have (NotInReleases), or a case naming releases target does not run (a kind
// cluster, an exec agent or a distribution is one release: issue 33). Such a case is not run and
// never required of the target (docs/certify.md "Not applicable").
func NotApplicable(target Target, c *Case) string {
	if why := NotInReleases(target, c); why != "" {
		return why
	}
	if na, ok := target.(interface{ NotApplicable(*Case) string }); ok {
		return na.NotApplicable(c)
	}
	return ""
}

// RunAsReleases returns cases made cells of the releases target runs (docs/releases.md "What a
// release means"). When a half of target is of one older release (Pair.Releases:
// `upstream@v1.36.3`, `upstream@v1.37.1+upstream@v1.34.4`), a case that names no releases becomes
// a cell of those releases; on a Matrix (`upstream@matrix`) it becomes one copy per cell, each a
// spec of its own; the oracle then expects what those releases do (docs/spec.md "Releases"). A
// cell a case's gates cannot exist in (the release refuses the flag) is not made: on a single
// pair the case stays as it is and the pair does not run it, saying which release it needs; on a
// matrix it is left out of that cell. Call it before the cases are completed and named.
func RunAsReleases(target Target, cases []*Case) []*Case {
	var cells []Releases
	switch t := target.(type) {
	case interface{ Cells() []Releases }:
		cells = t.Cells()
	case interface{ Releases() Releases }:
		if r := t.Releases(); r.Skewed() {
			cells = []Releases{r}
		}
	}
	if len(cells) == 0 {
		return cases
	}
	var out []*Case
	for _, c := range cases {
		if c.Releases != (Releases{}) {
			out = append(out, c)
			continue
		}
		var made []*Case
		for _, r := range cells {
			cell := c.DeepCopy()
			if r.Skewed() {
				cell.Releases = r
				cell.Labels = append(cell.Labels, SkewLabels(r)...)
			}
			if cell.validateReleases() == nil {
				made = append(made, cell)
			}
		}
		if len(made) == 0 {
			made = []*Case{c} // not run, with the release it needs
		}
		out = append(out, made...)
	}
	return out
}
