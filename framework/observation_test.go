package framework

import (
	"strings"
	"testing"
)

func obs() *Observation {
	return &Observation{
		Case:      "c",
		Admission: Admission{Allowed: true, Dropped: []string{"spec.volumes[0].emptyDir.mode"}},
		Volumes: []VolumeObservation{{
			Name: "v", Type: "emptyDir", SetUp: SetUpOK,
			Paths: []PathObservation{{Path: "a", Type: "file", Mode: "0644"}, {Path: ".", Type: "dir", Mode: "0750"}},
		}},
		Probes: []ProbeResult{{Name: "p", Allowed: true}},
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name   string
		change func(o *Observation)
		want   []string
	}{
		{"equal, source ignored", func(o *Observation) { o.Source = "reference" }, nil},
		{"path order ignored", func(o *Observation) {
			p := o.Volumes[0].Paths
			p[0], p[1] = p[1], p[0]
		}, nil},
		{"allowed", func(o *Observation) { o.Admission.Allowed = false }, []string{"admission.allowed: expected true, observed false"}},
		{"dropped", func(o *Observation) { o.Admission.Dropped = nil }, []string{`admission.dropped: expected ["spec.volumes[0].emptyDir.mode"], observed []`}},
		{"mode", func(o *Observation) { o.Volumes[0].Paths[1].Mode = "1777" }, []string{`volume "v" path ".": expected dir 0750 0:0, observed dir 1777 0:0`}},
		{"extra path", func(o *Observation) {
			o.Volumes[0].Paths = append(o.Volumes[0].Paths, PathObservation{Path: "b", Type: "file", Mode: "0600"})
		}, []string{`volume "v" path "b": observed file 0600 0:0, not expected`}},
		{"missing volume", func(o *Observation) { o.Volumes = nil }, []string{`volume "v": expected, not observed`}},
		{"setup", func(o *Observation) { o.Volumes[0].SetUp = "boom" }, []string{`volume "v" setUp: expected "ok", observed "boom"`}},
		{"probe", func(o *Observation) { o.Probes[0] = ProbeResult{Name: "p", Errno: "EACCES"} }, []string{`probe "p": expected allowed, observed denied (EACCES)`}},
		{"probe missing", func(o *Observation) { o.Probes = nil }, []string{`probe "p": expected, not run`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := obs()
			tt.change(o)
			got := Diff(obs(), o)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Diff:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestNormalizePutsRootFirst(t *testing.T) {
	o := obs()
	o.Normalize()
	if o.Volumes[0].Paths[0].Path != "." || o.APIVersion != ObservationVersion {
		t.Fatalf("got %+v", o)
	}
}

func TestFormatMode(t *testing.T) {
	for in, want := range map[uint32]string{0: "0000", 0750: "0750", 01777: "1777", 02770: "2770", 0100644: "0644"} {
		if got := FormatMode(in); got != want {
			t.Errorf("FormatMode(%o) = %s, want %s", in, got, want)
		}
	}
}

// Every kind of line Diff writes reads back (DiffLineSubject) as what it is about: the volume
// and its field (an entry's path), the probe, or the observation's field; names with quotes
// and spaces too. knowndiff reads which lines a known difference makes through it.
func TestDiffSubjectOfEveryLine(t *testing.T) {
	const vol, probeName = `v "1" x`, `uid 1003 reads "f"`
	base := func() *Observation {
		return &Observation{
			Admission: Admission{Allowed: true},
			Volumes: []VolumeObservation{{Name: vol, Type: "emptyDir", SetUp: SetUpOK,
				Paths: []PathObservation{{Path: ".", Type: "dir", Mode: "0750"}, {Path: "a b/c", Type: "file", Mode: "0644"}}}},
			Probes: []ProbeResult{{Name: probeName, Allowed: true}},
		}
	}
	for _, tc := range []struct {
		change func(o *Observation)
		want   DiffSubject
	}{
		{func(o *Observation) { o.Admission.Allowed = false }, DiffSubject{Field: "admission.allowed"}},
		{func(o *Observation) { o.Admission.Errors = []string{"x"} }, DiffSubject{Field: "admission.errors"}},
		{func(o *Observation) { o.Admission.Dropped = []string{"x"} }, DiffSubject{Field: "admission.dropped"}},
		{func(o *Observation) { o.Admission.Warnings = []string{"x"} }, DiffSubject{Field: "admission.warnings"}},
		{func(o *Observation) { o.Volumes = nil }, DiffSubject{Volume: vol}},
		{func(o *Observation) { o.Volumes = append(o.Volumes, VolumeObservation{Name: "w"}) }, DiffSubject{Volume: "w"}},
		{func(o *Observation) { o.Volumes[0].Type = "hostPath" }, DiffSubject{Volume: vol, Field: "type"}},
		{func(o *Observation) { o.Volumes[0].Medium = "Memory" }, DiffSubject{Volume: vol, Field: "medium"}},
		{func(o *Observation) { o.Volumes[0].SetUp = "failed" }, DiffSubject{Volume: vol, Field: "setUp"}},
		{func(o *Observation) { o.Volumes[0].SELinuxMount = "x" }, DiffSubject{Volume: vol, Field: "seLinuxMount"}},
		{func(o *Observation) { o.Volumes[0].RecursiveReadOnly = "Enabled" }, DiffSubject{Volume: vol, Field: "recursiveReadOnly"}},
		{func(o *Observation) { o.Volumes[0].Paths[0].Mode = "1777" }, DiffSubject{Volume: vol, Field: "path", Path: "."}},
		{func(o *Observation) { o.Volumes[0].Paths = o.Volumes[0].Paths[:1] }, DiffSubject{Volume: vol, Field: "path", Path: "a b/c"}},
		{func(o *Observation) {
			o.Volumes[0].Paths = append(o.Volumes[0].Paths, PathObservation{Path: `"q"`, Type: "file"})
		}, DiffSubject{Volume: vol, Field: "path", Path: `"q"`}},
		{func(o *Observation) { o.SandboxError = "x" }, DiffSubject{Field: "sandboxError"}},
		{func(o *Observation) { o.ContainerError = "x" }, DiffSubject{Field: "containerError"}},
		{func(o *Observation) { o.Rejected = "x" }, DiffSubject{Field: "rejected"}},
		{func(o *Observation) { o.ContainerUser = &ContainerUser{UID: 1} }, DiffSubject{Field: "containerUser"}},
		{func(o *Observation) { o.UserNamespace = &UserNamespace{IDs: 65536} }, DiffSubject{Field: "userNamespace"}},
		{func(o *Observation) { o.Probes[0].Allowed = false }, DiffSubject{Probe: probeName}},
		{func(o *Observation) { o.Probes[0].Made = &PathObservation{Path: "f"} }, DiffSubject{Probe: probeName}},
		{func(o *Observation) { o.Probes = nil }, DiffSubject{Probe: probeName}},
		{func(o *Observation) { o.Probes = append(o.Probes, ProbeResult{Name: "other"}) }, DiffSubject{Probe: "other"}},
	} {
		observed := base()
		tc.change(observed)
		lines := Diff(base(), observed)
		if len(lines) != 1 {
			t.Errorf("want one line, got %q", lines)
			continue
		}
		if got := DiffLineSubject(lines[0]); got != tc.want {
			t.Errorf("%q: subject %+v, want %+v", lines[0], got, tc.want)
		}
	}
}
