package catalogue

import (
	"fmt"
	"slices"

	"github.com/volperm/volperm/framework"
)

// The labels of the release-skew cells (framework.LabelReleaseSkew and its kin).
const (
	LabelReleaseSkew  = framework.LabelReleaseSkew
	LabelOldAPIServer = framework.LabelOldAPIServer
	LabelOldKubelet   = framework.LabelOldKubelet
	// LabelKubeletRelease marks the cases whose steps replace the kubelet by another release's
	// (kubeletRelease): a target whose kubelet is one agent leaves them out by label.
	LabelKubeletRelease = "kubelet-release"
)

// releaseVariant is one way a cell of the release-skew matrix with an older component meets a
// feature (docs/spec.md "Releases"): the apiserver of a release with the feature's gate runs it
// on or off; one without the field is asked to warn (client-go) or for strict field validation
// (kubectl).
type releaseVariant struct {
	releases framework.Releases
	labels   []string
	gates    framework.Gates
	strict   bool
	// words name the apiserver's side: "kube-apiserver v1.37 with its gate on".
	words string
}

// releaseVariants is every apiserver release x every kubelet release the skew policy allows but
// v1.37 x v1.37 (the skew area's own cells), x the settings of gate its apiserver's release has;
// what names the feature in the words ("the field", "the fields").
func releaseVariants(gate, gateWords, what string) []releaseVariant {
	var out []releaseVariant
	for ai, api := range framework.SupportedReleases {
		for ki := max(0, ai-framework.MaxKubeletSkew); ki <= ai; ki++ {
			kubelet := framework.SupportedReleases[ki]
			if api == framework.NewestRelease && kubelet == framework.NewestRelease {
				continue
			}
			r := framework.Releases{APIServer: api, Kubelet: kubelet}
			labels := framework.SkewLabels(r)
			if framework.ReleaseHas(api, gate) {
				for _, on := range []bool{true, false} {
					out = append(out, releaseVariant{releases: r, labels: labels,
						gates: framework.Gates{APIServer: map[string]bool{gate: on}},
						words: fmt.Sprintf("kube-apiserver %s with %s %s", api, gateWords, onOff(on))})
				}
				continue
			}
			out = append(out,
				releaseVariant{releases: r, labels: labels, words: fmt.Sprintf("kube-apiserver %s, which lacks %s, asked to warn (client-go)", api, what)},
				releaseVariant{releases: r, labels: labels, strict: true, words: fmt.Sprintf("kube-apiserver %s, which lacks %s, asked for strict field validation (kubectl)", api, what)})
		}
	}
	return out
}

// cell makes c the variant's cell: its releases, labels, apiserver gates and field validation.
func (v releaseVariant) cell(c *framework.Case) *framework.Case {
	c.Releases, c.Gates = v.releases, v.gates
	c.Labels = append(c.Labels, v.labels...)
	if v.strict {
		c.FieldValidation = framework.FieldValidationStrict
	}
	return c
}

// releaseCases is the release-skew matrix with an older component (releaseVariants) for
// KEP-5502 on the default medium and Memory: a pod with emptyDir mode 0750.
func releaseCases() []*framework.Case {
	var cases []*framework.Case
	for _, v := range releaseVariants(framework.GateEmptyDirVolumeMode, "its gate", "the field") {
		for _, m := range media[:2] {
			cases = append(cases, v.cell(&framework.Case{
				Name: fmt.Sprintf("%s on %s, %s, kubelet %s", modePhrase(ptr(skewMode)), m.phrase, v.words, v.releases.Kubelet),
				Area: framework.AreaSkew, Profile: framework.ProfileAlpha,
				Description: "Release skew (KEP-5502 Version Skew Strategy): a component of a release without the field or the gate behaves as the gate-off row says.",
				Pod:         emptyDirPod(m, ptr(skewMode)),
			}))
		}
	}
	return slices.Clip(cases)
}

// kubeletReleaseCases are KEP-5502's upgrade and downgrade of a node's kubelet, for real
// (docs/spec.md [steps.kubelet-release]): under a v1.37 apiserver with its gate on, a pod with
// emptyDir mode 0750 made under a v1.37 kubelet with its gate on keeps its directory through a
// downgrade to an older kubelet and the re-upgrade; one made under the older kubelet (which
// does not know the field: 0777, tmpfs' 1777 on Memory) keeps that through the upgrade. The
// second is created where the first's history stands after the downgrade: a target that runs
// histories for real creates both pods on one node, before and after the step.
func kubeletReleaseCases() []*framework.Case {
	var cases []*framework.Case
	api := map[string]bool{framework.GateEmptyDirVolumeMode: true}
	for i := len(framework.SupportedReleases) - 2; i >= 0 && len(framework.SupportedReleases)-1-i <= framework.MaxKubeletSkew; i-- {
		old := framework.SupportedReleases[i]
		labels := []string{LabelReleaseSkew, LabelOldKubelet, LabelKubeletRelease}
		for _, m := range media[:2] {
			cases = append(cases, &framework.Case{
				Name: fmt.Sprintf("%s on %s made under kubelet %s with both gates on, through a kubelet downgrade to %s and the re-upgrade", modePhrase(ptr(skewMode)), m.phrase, framework.NewestRelease, old),
				Area: framework.AreaSkew, Profile: framework.ProfileAlpha, Labels: labels,
				Description: "KEP-5502 version skew, a node's kubelet downgraded and upgraded again: the directory a pod got at creation stays.",
				Gates:       framework.Gates{APIServer: api, Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}},
				Pod:         emptyDirPod(m, ptr(skewMode)),
				After:       []framework.Step{{KubeletRelease: old}, {KubeletRelease: framework.NewestRelease}},
			}, &framework.Case{
				Name: fmt.Sprintf("%s on %s made under kubelet %s (which lacks the field), through the kubelet upgrade to %s", modePhrase(ptr(skewMode)), m.phrase, old, framework.NewestRelease),
				Area: framework.AreaSkew, Profile: framework.ProfileAlpha, Labels: labels,
				Description: "KEP-5502 version skew, a node's kubelet upgraded: a pod made by a kubelet without the field keeps the directory it got.",
				Releases:    framework.Releases{Kubelet: old},
				Gates:       framework.Gates{APIServer: api},
				Pod:         emptyDirPod(m, ptr(skewMode)),
				After:       []framework.Step{{KubeletRelease: framework.NewestRelease}},
			})
		}
	}
	return slices.Clip(cases)
}
