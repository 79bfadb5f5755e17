package gates

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"", "", ""},
		{"EmptyDirVolumeMode=true", "EmptyDirVolumeMode=true", ""},
		{" EmptyDirVolumeMode=false , PreservePermissions=true ", "EmptyDirVolumeMode=false,PreservePermissions=true", ""},
		{"EmptyDirVolumeMod=true", "", `unknown feature gate "EmptyDirVolumeMod": known gates are AtomicWriteVolumeUserFields, EmptyDirVolumeMode, PreservePermissions`},
		{"EmptyDirVolumeMode", "", "missing value"},
		{"EmptyDirVolumeMode=yes", "", "is not true or false"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, got.String(), err, tt.want)
		}
	}
}

func TestEnabledAndMerge(t *testing.T) {
	var s Set
	if s.Enabled(EmptyDirVolumeMode) {
		t.Error("EmptyDirVolumeMode is alpha: default off")
	}
	if s.Enabled(AtomicWriteVolumeUserFields) {
		t.Error("AtomicWriteVolumeUserFields is alpha (KEP-5936): default off")
	}
	m := s.Merge(map[string]bool{EmptyDirVolumeMode: true})
	if !m.Enabled(EmptyDirVolumeMode) || s.Enabled(EmptyDirVolumeMode) {
		t.Error("Merge must return a new set with the gate on")
	}
}
