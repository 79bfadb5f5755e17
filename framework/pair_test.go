package framework

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

type fakeAPI struct {
	allow bool
	fail  error
}

func (f fakeAPI) Info() TargetInfo                       { return TargetInfo{Name: "fakeapi", Version: "v1"} }
func (f fakeAPI) SupportsAdmission(*Case) (bool, string) { return true, "" }
func (f fakeAPI) Admit(ctx context.Context, c *Case) (Admitted, error) {
	if f.fail != nil {
		return Admitted{}, f.fail
	}
	if !f.allow {
		return Admitted{Admission: Admission{Errors: []string{"no"}}}, nil
	}
	return Admitted{Admission: Admission{Allowed: true}, Pod: c.Pod}, nil
}

type fakeNode struct {
	observed *int
	support  bool
}

func (f fakeNode) Info() TargetInfo { return TargetInfo{Name: "fakenode", Version: "v2"} }
func (f fakeNode) SupportsNode(*Case, Admitted) (bool, string) {
	if !f.support {
		return false, "node says no"
	}
	return true, ""
}
func (f fakeNode) ObserveNode(_ context.Context, c *Case, a Admitted) NodeResult {
	*f.observed++
	if a.Pod == nil || a.Pod.Name == "" {
		return NodeResult{Err: errors.New("the node must get the admitted, completed pod")}
	}
	return NodeResult{Volumes: []VolumeObservation{{Name: "v", Type: "emptyDir", SetUp: SetUpOK}}}
}
func (f fakeNode) Close() error { return nil }
func (f fakeNode) KnownDifference(c *Case) (KnownDifference, bool) {
	return KnownDifference{Why: "fake node differs"}, strings.Contains(c.Name, "differs")
}

func TestPair(t *testing.T) {
	n := 0
	c := &Case{Name: "a case that differs", Pod: podWithVolumes("v")}
	p := NewPair("fakeapi+fakenode", fakeAPI{allow: true}, fakeNode{observed: &n, support: true})
	obs, err := p.Observe(context.Background(), c)
	if err != nil || n != 1 || len(obs.Volumes) != 1 || obs.Source != "fakeapi+fakenode" {
		t.Fatalf("Observe = %+v, %v (node called %d times)", obs, err, n)
	}
	if c.Pod.Name != "" {
		t.Error("Observe changed the caller's case")
	}
	if k, ok := p.KnownDifference(c); !ok || k.Why != "fake node differs" {
		t.Errorf("KnownDifference = %q, %v", k.Why, ok)
	}
	if info := p.Info(); info.Details["apiserver"] != "fakeapi v1" || info.Details["kubelet"] != "fakenode v2" {
		t.Errorf("a mixed pair names both halves: %+v", info)
	}

	// A rejected pod never reaches the node, so the node's limits do not matter.
	rejecting := NewPair("x", fakeAPI{}, fakeNode{observed: &n})
	if ok, why := rejecting.Supports(c); !ok {
		t.Errorf("a rejected case is supported whatever the node: %s", why)
	}
	obs, err = rejecting.Observe(context.Background(), c)
	if err != nil || obs.Admission.Allowed || len(obs.Volumes) != 0 || n != 1 {
		t.Fatalf("rejected: %+v, %v", obs, err)
	}
	// An apiserver that fails is the target's failure: the case is run, and its Observe fails.
	failing := NewPair("x", fakeAPI{fail: errors.New("apiserver down")}, fakeNode{observed: &n})
	if ok, why := failing.Supports(c); !ok {
		t.Errorf("a case whose admission failed is not run (%s): it must fail", why)
	}
	if _, err := failing.Observe(context.Background(), c); err == nil || n != 1 {
		t.Errorf("Observe after a failed admission = %v (node called %d times), want the error", err, n)
	}
	// An admitted pod asks the node.
	if ok, why := NewPair("x", fakeAPI{allow: true}, fakeNode{observed: &n}).Supports(c); ok || why != "node says no" {
		t.Errorf("Supports = %v, %q", ok, why)
	}
	admissionOnly := &Case{Name: "adm", AdmissionOnly: true, Pod: &corev1.Pod{}}
	if _, err := NewPair("x", fakeAPI{allow: true}, fakeNode{observed: &n}).Observe(context.Background(), admissionOnly); err != nil || n != 1 {
		t.Errorf("an admission-only case must not reach the node: %v, %d", err, n)
	}
}

func TestPairReferences(t *testing.T) {
	n := 0
	RegisterHalves("fakeapi", func(TargetOptions) (APIServer, error) { return fakeAPI{allow: true}, nil }, nil)
	RegisterHalves("fakenode", nil, func(o TargetOptions) (Node, error) {
		if o.Arg != "/bin/agent" {
			return nil, errors.New("arg not passed: " + o.Arg)
		}
		return fakeNode{observed: &n, support: true}, nil
	})
	if _, err := NewTarget("fakeapi+fakenode:/bin/agent", TargetOptions{}); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"nope+fakenode:/bin/agent": `unknown apiserver "nope"`,
		"fakeapi+nope":             `unknown kubelet "nope"`,
	} {
		if _, err := NewTarget(ref, TargetOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewTarget(%q) = %v, want %q", ref, err, want)
		}
	}
}

// countingAPI counts its admissions.
type countingAPI struct {
	fakeAPI
	n *int
}

// countingMu guards every countingAPI's count: a batch admits from several goroutines.
var countingMu sync.Mutex

func (f countingAPI) Admit(ctx context.Context, c *Case) (Admitted, error) {
	countingMu.Lock()
	*f.n++
	countingMu.Unlock()
	return f.fakeAPI.Admit(ctx, c)
}

// TestPairAdmitsOnce: what the suites ask of a case (HostNeeds, Supports, then Observe) admits
// it once; observing it again admits it again, and so does a case asked about too long ago.
func TestPairAdmitsOnce(t *testing.T) {
	admits, observed := 0, 0
	p := NewPair("x", countingAPI{fakeAPI{allow: true}, &admits}, fakeNode{observed: &observed, support: true})
	c := &Case{Name: "once", Pod: podWithVolumes("v")}
	_ = p.HostNeeds(c)
	if ok, why := p.Supports(c); !ok {
		t.Fatal(why)
	}
	if _, err := p.Observe(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if admits != 1 || observed != 1 {
		t.Errorf("HostNeeds, Supports and Observe admitted %d times and observed %d, want 1 and 1", admits, observed)
	}
	if _, err := p.Observe(context.Background(), c); err != nil || admits != 2 {
		t.Errorf("a second Observe admitted %d times in all (%v), want 2: Observe takes the admission", admits, err)
	}
	for i := 0; i <= admittedKept; i++ {
		p.Supports(&Case{Name: "other", Pod: podWithVolumes("v")})
	}
	admits = 0
	p.Supports(c)
	p.Supports(c)
	if admits != 1 {
		t.Errorf("a case forgotten and asked about twice admitted %d times, want 1", admits)
	}
	if len(p.admitted) > admittedKept {
		t.Errorf("the pair remembers %d admissions, at most %d", len(p.admitted), admittedKept)
	}
}
