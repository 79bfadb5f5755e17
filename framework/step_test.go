package framework

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestStepKinds: every field of Step is a kind of step of the table, by its JSON name; a step
// with that field alone set is of that kind, one with two fields of none; only a restart and a
// kubelet release start a kubelet.
func TestStepKinds(t *testing.T) {
	one := map[StepKind]Step{
		StepChmod:          {Chmod: &Chmod{Volume: "v", Path: "."}},
		StepSetGates:       {SetGates: &Gates{Kubelet: map[string]bool{GateEmptyDirVolumeMode: true}}},
		StepRestartKubelet: {RestartKubelet: true},
		StepUpdateSources:  {UpdateSources: map[string]map[string]string{"secret/s": {"k": "v"}}},
		StepKubeletRelease: {KubeletRelease: "v1.36"},
	}
	st := reflect.TypeFor[Step]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if !slices.Contains(StepKinds(), StepKind(name)) {
			t.Errorf("Step.%s (%q) is no kind of step of the table (step.go)", st.Field(i).Name, name)
		}
	}
	if len(StepKinds()) != st.NumField() || len(one) != st.NumField() {
		t.Fatalf("%d kinds, %d steps here, for %d fields of Step", len(StepKinds()), len(one), st.NumField())
	}
	for kind, s := range one {
		if s.Kind() != kind {
			t.Errorf("a %s step is of kind %q", kind, s.Kind())
		}
		if starts := kind == StepRestartKubelet || kind == StepKubeletRelease; s.StartsKubelet() != starts {
			t.Errorf("%s: StartsKubelet %v", kind, s.StartsKubelet())
		}
	}
	two := Step{RestartKubelet: true, KubeletRelease: "v1.36"}
	if two.Kind() != "" || two.StartsKubelet() || (Step{}).Kind() != "" {
		t.Errorf("a step of two kinds is %q, of none %q", two.Kind(), Step{}.Kind())
	}
	if !one[StepSetGates].SetsKubeletGates() || (Step{SetGates: &Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: true}}}).SetsKubeletGates() {
		t.Error("SetsKubeletGates: kubelet gates written, apiserver gates not")
	}
}
