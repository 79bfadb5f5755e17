package oracle

import (
	"reflect"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
)

// docs/spec.md "Releases": what each component's release makes of a pod with emptyDir modes.
func TestReleases(t *testing.T) {
	two := func() framework.Case {
		return framework.Case{Pod: podWith(emptyDir("a", "", i32(0750)), emptyDir("b", "Memory", i32(0700)))}
	}
	on := framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}, Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}
	tests := []struct {
		name      string
		releases  framework.Releases
		strict    bool
		gates     framework.Gates
		admission framework.Admission
		roots     []string // the root modes, per volume; nil when rejected
	}{
		{
			name: "newest, gates on", gates: on,
			admission: framework.Admission{Allowed: true}, roots: []string{"0750", "0700"},
		},
		{
			name: "apiserver v1.36, Warn: admitted without the fields, one warning each", releases: framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"},
			admission: framework.Admission{Allowed: true, Warnings: []string{`unknown field "spec.volumes[0].emptyDir.mode"`, `unknown field "spec.volumes[1].emptyDir.mode"`}},
			roots:     []string{"0777", "1777"},
		},
		{
			name: "apiserver v1.34, Strict: rejected, the fields joined", releases: framework.Releases{APIServer: "v1.34", Kubelet: "v1.34"}, strict: true,
			admission: framework.Admission{Errors: []string{`Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.volumes[0].emptyDir.mode", unknown field "spec.volumes[1].emptyDir.mode"`}},
		},
		{
			name: "Strict changes nothing where the apiserver knows the field", releases: framework.Releases{Kubelet: "v1.35"}, strict: true,
			gates:     framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}},
			admission: framework.Admission{Allowed: true}, roots: []string{"0777", "1777"},
		},
		{
			name: "apiserver v1.37 gate off drops, the kubelet v1.34 would not know anyway", releases: framework.Releases{Kubelet: "v1.34"},
			admission: framework.Admission{Allowed: true, Dropped: []string{"spec.volumes[0].emptyDir.mode", "spec.volumes[1].emptyDir.mode"}},
			roots:     []string{"0777", "1777"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := two()
			c.Name, c.Area, c.Profile, c.Releases, c.Gates = tt.name, framework.AreaSkew, framework.ProfileAlpha, tt.releases, tt.gates
			if tt.strict {
				c.FieldValidation = framework.FieldValidationStrict
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("not a valid case: %v", err)
			}
			obs := Expect(&c)
			if !reflect.DeepEqual(obs.Admission, tt.admission) {
				t.Errorf("admission %+v, want %+v", obs.Admission, tt.admission)
			}
			var roots []string
			for _, v := range obs.Volumes {
				roots = append(roots, v.Paths[0].Mode)
			}
			if !reflect.DeepEqual(roots, tt.roots) {
				t.Errorf("root modes %q, want %q", roots, tt.roots)
			}
		})
	}
}

// A cell that cannot exist is refused: the version-skew policy, or a gate its release lacks.
func TestReleaseCellsThatCannotExist(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    framework.Case
		want string
	}{
		{"kubelet newer", framework.Case{Releases: framework.Releases{APIServer: "v1.35", Kubelet: "v1.36"}}, "newer than kube-apiserver"},
		{"kubelet four minors older", framework.Case{Releases: framework.Releases{Kubelet: "v1.33"}}, "unknown release"},
		{"gate on a release without it", framework.Case{Releases: framework.Releases{Kubelet: "v1.36"},
			Gates: framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: false}}}, "does not exist in kubelet v1.36"},
		{"a setGates step on a release without it", framework.Case{Releases: framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"},
			After: []framework.Step{{SetGates: &framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}}}}}, "after[0].setGates.apiserver"},
		{"fieldValidation", framework.Case{FieldValidation: "strict"}, "fieldValidation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.Name, c.Area, c.Profile, c.Pod = "x", framework.AreaSkew, framework.ProfileAlpha, podWith(emptyDir("a", "", nil))
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
