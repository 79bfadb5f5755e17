package catalogue

import (
	"fmt"
	"slices"

	"github.com/volperm/volperm/framework"
)

// The labels of the release-skew cells whose apiserver or kubelet is older than the newest
// release (docs/spec.md "Releases"): they run where a half can be that release (the reference
// simulates every one); a target of one release leaves them out by label. LabelOldAPIServer and
// LabelOldKubelet say which component is older: upstream+reference (the real v1.37 apiserver)
// runs the cells of an older kubelet with '!old-apiserver'.
const (
	LabelReleaseSkew  = "release-skew"
	LabelOldAPIServer = "old-apiserver"
	LabelOldKubelet   = "old-kubelet"
)

// releaseCases is the release-skew matrix with an older component (docs/spec.md "Releases"):
// every apiserver release x every kubelet release the skew policy allows, but v1.37 x v1.37
// (skewCases), x the EmptyDirVolumeMode settings the apiserver's release has (no older release
// has the gate: its cells set none), x fieldValidation Warn and Strict where the apiserver does
// not know the field, on the default medium and Memory: a pod with emptyDir mode 0750.
func releaseCases() []*framework.Case {
	var cases []*framework.Case
	for ai, api := range framework.SupportedReleases {
		for ki := max(0, ai-framework.MaxKubeletSkew); ki <= ai; ki++ {
			kubelet := framework.SupportedReleases[ki]
			if api == framework.NewestRelease && kubelet == framework.NewestRelease {
				continue
			}
			r := framework.Releases{APIServer: api, Kubelet: kubelet}
			labels := []string{LabelReleaseSkew}
			if api != framework.NewestRelease {
				labels = append(labels, LabelOldAPIServer)
			}
			if kubelet != framework.NewestRelease {
				labels = append(labels, LabelOldKubelet)
			}
			type variant struct {
				gates  framework.Gates
				strict bool
				words  string
			}
			var variants []variant
			if framework.ReleaseHas(api, framework.GateEmptyDirVolumeMode) {
				for _, on := range []bool{true, false} {
					variants = append(variants, variant{
						gates: framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: on}},
						words: fmt.Sprintf("kube-apiserver %s with its gate %s", api, onOff(on)),
					})
				}
			} else {
				variants = append(variants,
					variant{words: fmt.Sprintf("kube-apiserver %s, which lacks the field, asked to warn (client-go)", api)},
					variant{strict: true, words: fmt.Sprintf("kube-apiserver %s, which lacks the field, asked for strict field validation (kubectl)", api)})
			}
			for _, v := range variants {
				for _, m := range media[:2] {
					c := &framework.Case{
						Name: fmt.Sprintf("%s on %s, %s, kubelet %s", modePhrase(ptr(skewMode)), m.phrase, v.words, kubelet),
						Area: framework.AreaSkew, Profile: framework.ProfileAlpha, Labels: labels,
						Description: "Release skew (KEP-5502 Version Skew Strategy): a component of a release without the field or the gate behaves as the gate-off row says.",
						Gates:       v.gates, Releases: r, Pod: emptyDirPod(m, ptr(skewMode)),
					}
					if v.strict {
						c.FieldValidation = framework.FieldValidationStrict
					}
					cases = append(cases, c)
				}
			}
		}
	}
	return slices.Clip(cases)
}
