package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// skewMode is the mode of every skew case: the KEP's story 1.
const skewMode int32 = 0750

// cell is the EmptyDirVolumeMode gate of the two components.
type cell struct{ apiserver, kubelet bool }

func (c cell) gates() framework.Gates {
	return gates(framework.GateEmptyDirVolumeMode, c.apiserver, c.kubelet)
}

func (c cell) phrase() string {
	return fmt.Sprintf("apiserver gate %s and kubelet gate %s", onOff(c.apiserver), onOff(c.kubelet))
}

// steps moves the gates from c to next: setGates for the component that changed, and a kubelet
// restart when the kubelet's gate changed (a kubelet gets new gates only by restarting).
func (c cell) steps(next cell) []framework.Step {
	var s []framework.Step
	if c.apiserver != next.apiserver {
		s = append(s, framework.Step{SetGates: &framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: next.apiserver}}})
	}
	if c.kubelet != next.kubelet {
		s = append(s,
			framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: next.kubelet}}},
			framework.Step{RestartKubelet: true})
	}
	return s
}

func skewPod() *corev1.Pod { return emptyDirPod(media[0], ptr(skewMode)) }

func skewCase(name, desc string, g framework.Gates, after []framework.Step) *framework.Case {
	return &framework.Case{Name: name, Area: framework.AreaSkew, Profile: framework.ProfileAlpha, Description: desc, Gates: g, Pod: skewPod(), After: after}
}

func skewCases() []*framework.Case {
	return append(append(append(append(append(append(flipCases(), sequenceCases()...), updateCases()...), releaseCases()...), ownerSkewCases()...), ownerReleaseCases()...), kubeletReleaseCases()...)
}

// flipCases: every cell, one component flipped, the pod created before the flip (it keeps what
// it got: KEP-5502 "Version Skew Strategy") or after it (it gets the new cell).
func flipCases() []*framework.Case {
	var cases []*framework.Case
	for _, from := range []cell{{false, false}, {false, true}, {true, false}, {true, true}} {
		flips := []struct {
			component string
			to        cell
		}{{"apiserver", cell{!from.apiserver, from.kubelet}}, {"kubelet", cell{from.apiserver, !from.kubelet}}}
		for _, f := range flips {
			cases = append(cases,
				skewCase(
					fmt.Sprintf("%s created with %s, then the %s gate turned %s", modePhrase(ptr(skewMode)), from.phrase(), f.component, onOff(flipped(from, f.to))),
					"Running pods are not changed by a later gate flip (KEP-5502 version skew); a kubelet restart sets the volume up again.",
					from.gates(), from.steps(f.to)),
				skewCase(
					fmt.Sprintf("%s created after the %s gate turned %s, with %s", modePhrase(ptr(skewMode)), f.component, onOff(flipped(from, f.to)), f.to.phrase()),
					"A pod created after a flip gets the new gates: the cell it lands in decides.",
					f.to.gates(), nil),
			)
		}
	}
	return cases
}

// flipped is the new value of the gate that differs between from and to.
func flipped(from, to cell) bool {
	if from.apiserver != to.apiserver {
		return to.apiserver
	}
	return to.kubelet
}

// sequences are gate histories: control plane upgraded first and downgraded last (the
// supported order), and both components together.
var sequences = []struct {
	name   string
	phases []cell
	words  []string // when a pod is created, per phase
}{
	{
		name:   "upgrade, downgrade, re-upgrade",
		phases: []cell{{false, false}, {true, false}, {true, true}, {true, false}, {false, false}, {true, false}, {true, true}},
		words:  []string{"before the upgrade", "after the apiserver upgrade", "after the kubelet upgrade", "after the kubelet downgrade", "after the apiserver downgrade", "after the apiserver re-upgrade", "after the kubelet re-upgrade"},
	},
	{
		name:   "gates on, off, on",
		phases: []cell{{true, true}, {false, false}, {true, true}},
		words:  []string{"while the gates are on", "while the gates are off", "after the gates are on again"},
	},
}

// sequenceCases: a pod created in each phase lives through the rest of the sequence.
func sequenceCases() []*framework.Case {
	var cases []*framework.Case
	for _, seq := range sequences {
		for i, created := range seq.phases {
			var after []framework.Step
			for j := i + 1; j < len(seq.phases); j++ {
				after = append(after, seq.phases[j-1].steps(seq.phases[j])...)
			}
			cases = append(cases, skewCase(
				fmt.Sprintf("%s through %s, created %s", modePhrase(ptr(skewMode)), seq.name, seq.words[i]),
				"KEP-5502 version skew: the mode a pod got at creation stays through later gate changes and kubelet restarts.",
				created.gates(), after))
		}
	}
	return cases
}

// updateCases: field dropping on update (v1.37 pkg/api/pod dropDisabledFields,
// emptyDirModeInUse): with the apiserver gate off, mode is kept if the old pod spec had a mode
// on any emptyDir.
func updateCases() []*framework.Case {
	twoDirs := func(a, b *int32) *corev1.Pod {
		return podOf(
			volume("first", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: a}}),
			volume("second", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: b}}))
	}
	rows := []struct {
		name     string
		old, new *corev1.Pod
		api      bool
	}{
		{"pod update keeping emptyDir mode 0750", emptyDirPod(media[0], ptr[int32](0750)), emptyDirPod(media[0], ptr[int32](0750)), false},
		{"pod update changing emptyDir mode 0750 to 0700", emptyDirPod(media[0], ptr[int32](0750)), emptyDirPod(media[0], ptr[int32](0700)), false},
		{"pod update adding emptyDir mode 0750 to a pod without mode", emptyDirPod(media[0], nil), emptyDirPod(media[0], ptr[int32](0750)), false},
		{"pod update adding emptyDir mode 0750 to a second emptyDir when the first has mode 0700", twoDirs(ptr[int32](0700), nil), twoDirs(ptr[int32](0700), ptr[int32](0750)), false},
		{"pod update adding emptyDir mode 0750 to a pod without mode", emptyDirPod(media[0], nil), emptyDirPod(media[0], ptr[int32](0750)), true},
	}
	var cases []*framework.Case
	for _, r := range rows {
		c := cell{r.api, true}
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("%s, %s", r.name, c.phrase()),
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Description: "An update (a workload's pod template) keeps mode with the apiserver gate off only if the old spec already used it.",
			Gates:       c.gates(),
			OldPod:      r.old,
			Pod:         r.new,
		})
	}
	return cases
}
