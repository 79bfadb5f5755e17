package framework

import (
	"context"
	"strings"
	"testing"
)

type fakeTarget struct{ arg string }

func (f *fakeTarget) Info() TargetInfo              { return TargetInfo{Name: "fake"} }
func (f *fakeTarget) Supports(*Case) (bool, string) { return true, "" }
func (f *fakeTarget) Close() error                  { return nil }
func (f *fakeTarget) Observe(context.Context, *Case) (*Observation, error) {
	return &Observation{}, nil
}

func TestRegistry(t *testing.T) {
	RegisterTarget("fake-for-test", "a fake", func(o TargetOptions) (Target, error) { return &fakeTarget{arg: o.Arg}, nil })
	tg, err := NewTarget("fake-for-test:/some/path", TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.(*fakeTarget).arg != "/some/path" {
		t.Errorf("arg not passed: %+v", tg)
	}
	if _, err := NewTarget("nope", TargetOptions{}); err == nil || !strings.Contains(err.Error(), "fake-for-test") {
		t.Errorf("unknown target error must list the known ones, got %v", err)
	}
	if TargetSummary("fake-for-test") != "a fake" {
		t.Error("summary lost")
	}
}

func TestCompleteIsDeterministicAndIdempotent(t *testing.T) {
	mk := func() *Case {
		return &Case{Name: "emptyDir mode 01777 on medium Memory, both gates on", Pod: podWithVolumes("a", "b")}
	}
	a, b := mk(), mk()
	a.Complete()
	b.Complete()
	b.Complete()
	if a.Pod.UID != b.Pod.UID || a.Pod.Name != b.Pod.Name || a.Pod.Name != "emptydir-mode-01777-on-medium-memory-both-gates-on" {
		t.Fatalf("not deterministic: %q %q %q", a.Pod.Name, a.Pod.UID, b.Pod.UID)
	}
	if a.Pod.Namespace != Namespace || len(b.Pod.Spec.Containers) != 1 || len(b.Pod.Spec.Containers[0].VolumeMounts) != 2 {
		t.Fatalf("defaults missing: %+v", b.Pod.Spec)
	}
	long := &Case{Name: strings.Repeat("very long case name ", 10), Pod: podWithVolumes()}
	long.Complete()
	if len(long.Pod.Name) > 63 {
		t.Errorf("name too long: %q", long.Pod.Name)
	}
}
