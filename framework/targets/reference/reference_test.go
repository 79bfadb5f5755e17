package reference_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/hostfeature"
)

func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	os.Exit(m.Run())
}

// Cases observed in parallel (Prepare, framework.ConcurrentNode) observe exactly what they
// observe one at a time: every case but two of every three emptyDir sweep cases, compared
// field by field. The two wall times are logged (measured, not asserted).
func TestConcurrentSameObservations(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	var cases []*framework.Case
	for i, c := range catalogue.All() {
		if c.Area != framework.AreaEmptyDir || i%3 == 0 {
			cases = append(cases, c)
		}
	}
	one, err := reference.New(framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	par, err := reference.New(framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	batcher, ok := par.(framework.Batcher)
	if !ok {
		t.Fatal("the reference target does not batch")
	}
	ctx := context.Background()
	start := time.Now()
	want := make([]*framework.Observation, len(cases))
	for i, c := range cases {
		if want[i], err = one.Observe(ctx, c); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	sequential := time.Since(start)
	start = time.Now()
	if err := batcher.Prepare(ctx, cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got, err := par.Observe(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if d := framework.Diff(want[i], got); len(d) > 0 {
			t.Errorf("%s: in parallel it observes otherwise: %v", c.Name, d)
		}
	}
	t.Logf("%d cases: one at a time %s, in parallel %s", len(cases), sequential.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	for _, tg := range []framework.Target{one, par} {
		if err := tg.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
