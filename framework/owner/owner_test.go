package owner

import (
	"os"
	"os/exec"
	"testing"
)

// deadMark is the Mark of a process that has exited.
func deadMark(t *testing.T) Mark {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := startTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	m := Mark{Machine: Self().Machine, Boot: Self().Boot, PID: cmd.Process.Pid, StartTime: st}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAlive(t *testing.T) {
	s := Self()
	if s.PID != os.Getpid() || s.StartTime == 0 || s.Machine == "" {
		t.Fatalf("Self() = %+v", s)
	}
	if !s.Alive() {
		t.Error("this process is not alive")
	}
	reused := s
	reused.StartTime++
	if reused.Alive() {
		t.Error("a pid with another start time (reused) counts as alive")
	}
	rebooted := s
	rebooted.Boot = "another-boot"
	if rebooted.Alive() {
		t.Error("a run of an earlier boot counts as alive")
	}
	other := Mark{Machine: "another-machine", PID: 1, StartTime: 1}
	if !other.Alive() {
		t.Error("another machine's run must count as alive: volperm cannot tell, so it never touches it")
	}
	if deadMark(t).Alive() {
		t.Error("an exited process counts as alive")
	}
}

func TestLabelsAndTagRoundTrip(t *testing.T) {
	s := Self()
	if m, ok := FromLabels(s.Labels()); !ok || m != s {
		t.Errorf("FromLabels(Labels()) = %+v %v, want %+v", m, ok, s)
	}
	for k, v := range s.Labels() {
		if len(v) > 63 {
			t.Errorf("label %s=%q is longer than a Kubernetes label value may be", k, v)
		}
	}
	if _, ok := FromLabels(map[string]string{"app": "x"}); ok {
		t.Error("labels without a mark read as one")
	}
	if m, ok := FromTag("volperm-ref-" + s.Tag() + "-12345"); !ok || m != s {
		t.Errorf("FromTag = %+v %v, want %+v", m, ok, s)
	}
	for _, bad := range []string{"volperm-ref-12345", "volperm-ref-x.1-2", "other"} {
		if _, ok := FromTag(bad); ok {
			t.Errorf("FromTag(%q) read a mark", bad)
		}
	}
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	if _, ok := Read(dir); ok {
		t.Error("a dir without a marker has an owner")
	}
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	if m, ok := Read(dir); !ok || m != Self() {
		t.Errorf("Read = %+v %v", m, ok)
	}
	if err := os.WriteFile(dir+"/"+MarkerFile, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := Read(dir); ok {
		t.Error("a broken marker reads as an owner")
	}
}
