package suites

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/hostfeature"
)

// absentPageSize is a huge page size no architecture offers: a case on it can never run here.
const absentPageSize = "3Mi"

const childHostEnv = "VOLPERM_SUITES_TEST_HOST_DIR"

// hugePagesCase is a catalogue case on HugePages-2Mi moved to HugePages-<size>.
func hugePagesCase(t *testing.T, size string) *framework.Case {
	t.Helper()
	for _, c := range catalogue.All() {
		if c.AdmissionOnly || c.Pod == nil || len(c.Pod.Spec.Volumes) != 1 || len(c.After) > 0 {
			continue
		}
		v := c.Pod.Spec.Volumes[0]
		if v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumHugePagesPrefix+"2Mi" || v.EmptyDir.Mode == nil {
			continue
		}
		cc := c.DeepCopy()
		cc.Name = "mode on HugePages-" + size
		cc.Pod.Spec.Volumes[0].EmptyDir.Medium = corev1.StorageMedium(string(corev1.StorageMediumHugePagesPrefix) + size)
		for i := range cc.Pod.Spec.Containers {
			r := &cc.Pod.Spec.Containers[i].Resources
			for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
				if _, ok := l[corev1.ResourceHugePagesPrefix+"2Mi"]; ok {
					delete(l, corev1.ResourceHugePagesPrefix+"2Mi")
					q := resource.MustParse(size)
					q.Add(q)
					l[corev1.ResourceName(corev1.ResourceHugePagesPrefix+size)] = q
				}
			}
		}
		cc.Complete()
		return cc
	}
	t.Fatal("the catalogue has no HugePages-2Mi case with a mode")
	return nil
}

// TestHugePageSizeTheHostLacks: on the reference target a HugePages medium of a size this
// machine lacks is "not run" with the feature named, also with CI=true, and a failure when
// VOLPERM_REQUIRE names the size (the reference node would otherwise fail the mount with EINVAL).
func TestHugePageSizeTheHostLacks(t *testing.T) {
	if dir := os.Getenv(childHostEnv); dir != "" {
		target, err := framework.NewTarget("reference", framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		cfg := &Config{Target: target, Cases: []*framework.Case{hugePagesCase(t, absentPageSize)}, Require: RequireFromEnv(), ReportDir: dir}
		if _, err := RunSpecs(&failRecorder{}, cfg, types.NewDefaultSuiteConfig(), types.NewDefaultReporterConfig()); err != nil {
			t.Fatal(err)
		}
		return
	}
	hostfeature.Need(t, hostfeature.Root) // a case reaching the reference node needs root first
	feature := string(hostfeature.HugePages(resource.MustParse(absentPageSize)))
	for _, tc := range []struct {
		name, require string
		wantResult    string
		wantIn        string
	}{
		{"CI=true: not run, the feature named", "", report.ResultPassed, "this machine lacks " + feature},
		{"required by name: a failure", feature, report.ResultFailed, "this run requires " + feature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHugePageSizeTheHostLacks$")
			cmd.Env = append(os.Environ(), childHostEnv+"="+dir, "CI=true", hostfeature.EnvRequire+"="+tc.require)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("child suite: %v\n%s", err, out)
			}
			s := readSummary(t, dir)
			var msgs []string
			for _, r := range append(s.NotRun, s.Failures...) {
				msgs = append(msgs, r.Message)
			}
			if s.Result != tc.wantResult || len(msgs) != 1 || !strings.Contains(msgs[0], tc.wantIn) {
				t.Errorf("result %s, messages %q; want %s with one message containing %q", s.Result, msgs, tc.wantResult, tc.wantIn)
			}
		})
	}
}
