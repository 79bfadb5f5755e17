package kind_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

// e2eCases are run on real kind clusters and compared with the oracle. known is the one
// expected difference of upstream v1.37 (docs/spec.md "emptyDir": tmpfs is mounted after the
// chmod, so Memory shows tmpfs' own 1777), "" when the cluster must agree with the oracle.
var e2eCases = []struct {
	name  string
	known string
}{
	{name: "emptyDir mode 0750 keeps uid 1003 from listing and creating (KEP story 1)"},
	{name: "emptyDir mode 0750 with fsGroup 2000 lets uid 1004 of group 2000 create (KEP story 1)"},
	{name: "emptyDir mode 01777 on the default medium gives /tmp behaviour to uids 1001 and 1002 (KEP story 2)"},
	{name: "emptyDir mode 01777 on medium Memory gives /tmp behaviour to uids 1001 and 1002 (KEP story 2)"},
	{name: "emptyDir without mode lets any uid create, list and delete (GA 0777)"},
	{name: "emptyDir mode 0750 on medium Memory, both gates on",
		known: `volume "scratch" path ".": expected dir 0750 0:0, observed dir 1777 0:0`},
	{name: "emptyDir mode 0750 in the skew cell apiserver on, kubelet on"},
	{name: "emptyDir mode 0750 in the skew cell apiserver on, kubelet off"},
	{name: "emptyDir mode 0750 in the skew cell apiserver off, kubelet on"},
	{name: "emptyDir mode 0750 in the skew cell apiserver off, kubelet off"},
	{name: "emptyDir mode 0750 created with apiserver gate off and kubelet gate off, then the kubelet gate turned on"},
	{name: "fsGroup 2000 is not applied again to an emptyDir after a kubelet restart"},
	{name: "hostPath type Socket for /var/run/docker.sock with a socket there"},
	{name: "hostPath type Socket for /var/run/docker.sock with nothing there"},
	{name: "hostPath type Socket for /var/run/docker.sock with a directory there"},
	{name: "ssh key secret with defaultMode 256 and fsGroup 2000, today (seed 002)"},
	{name: "flexVolume allowlist: an allowlist denies an unlisted driver (pod)"},
	{name: "flexVolume allowlist: an allowlist denies an unlisted driver (PersistentVolume)"},
	{name: "flexVolume allowlist: two flexVolumes, the second driver not in the allowlist (pod)"},
	{name: "flexVolume allowlist: a policy with an empty driver name is invalid (pod)"},
	{name: "fsGroup 2000 ORs 0660 into a 0410 file of a flexVolume at first set-up"},
	{name: "fsGroupChangePolicy Always walks a flexVolume again after a kubelet restart"},
	{name: "emptyDir mode 0750 through upgrade, downgrade, re-upgrade, created before the upgrade"},
	{name: "emptyDir mode 0750 through upgrade, downgrade, re-upgrade, created after the kubelet downgrade"},
}

// newTarget builds (or reuses) the node image and returns a kind target (one cluster,
// reconfigured in place); the cluster is deleted when the test ends. It needs root and a
// Docker engine (hack/docker-up.sh); set VOLPERM_KIND_E2E=1 to run it.
func newTarget(t *testing.T, ctx context.Context) *kind.Target {
	if os.Getenv("VOLPERM_KIND_E2E") != "1" {
		t.Skip("set VOLPERM_KIND_E2E=1 to create kind clusters (needs root and Docker)")
	}
	nodeImage, probe := buildImages(t, ctx)
	target, err := kind.New(kind.Options{NodeImage: nodeImage, ProbeImage: probe, Log: testWriter{t},
		Keep: os.Getenv("VOLPERM_KIND_KEEP") == "1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := target.Close(); err != nil {
			t.Error(err)
		}
	})
	return target
}

// TestKindEndToEnd runs e2eCases (the flexVolume allowlist ones under
// manifests/flexvolume-vap.yaml, the flexVolume set-up ones through the harness's driver, the
// skew ones through real apiserver and kubelet flips) on one kind cluster and compares them
// with the oracle.
func TestKindEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	target := newTarget(t, ctx)

	byName := map[string]*framework.Case{}
	for _, c := range catalogue.All() {
		byName[c.Name] = c
	}
	var cases []*framework.Case
	for _, e := range e2eCases {
		c := byName[e.name]
		if c == nil {
			t.Fatalf("case %q is not in the catalogue", e.name)
		}
		if ok, why := target.Supports(c); !ok {
			t.Fatalf("case %q not supported: %s", e.name, why)
		}
		cases = append(cases, c)
	}
	start := time.Now()
	results := target.ObserveBatch(ctx, cases)
	t.Logf("%d cases in %s", len(cases), time.Since(start).Round(time.Second))
	for i, e := range e2eCases {
		t.Run(e.name, func(t *testing.T) {
			r := results[i]
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			diff := strings.Join(framework.Diff(oracle.Expect(cases[i]), r.Observation), "\n")
			if diff != e.known {
				t.Errorf("observed differs from the oracle:\n%s\nwant difference: %q\nobserved:\n%s", diff, e.known, r.Observation.JSON())
			}
		})
	}
}

// buildImages builds (or finds in the cache) the probe image and the node image preloading it.
func buildImages(t *testing.T, ctx context.Context) (nodeImage, probe string) {
	t.Helper()
	// The package's directory is the test's working directory (runtime.Caller's path is the
	// module's import path under -trimpath, which make test and CI build with).
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	opts := nodeimage.Options{ModuleDir: filepath.Join(repo, "build", "kindnode"), Log: testWriter{t}}
	probe, err = nodeimage.BuildProbeImage(ctx, opts, repo)
	if err != nil {
		t.Fatal(err)
	}
	opts.Preload = []string{probe}
	img, err := nodeimage.Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return img.Image, probe
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestKindBatchedAgainstPodPerCase runs the same cases on the same cluster twice, batched (many
// cases a pod) and with one pod per case, and checks that both observe the same; it logs the pod
// starts and wall time of each. VOLPERM_KIND_BATCH_CASES picks the cases: "all" for every case
// the target supports without steps, else a sample of every 25th. Observed probe pods are
// deleted as they finish, so one pod per case stays within the node's pod limit.
func TestKindBatchedAgainstPodPerCase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Minute)
	defer cancel()
	target := newTarget(t, ctx)
	var cases []*framework.Case
	for i, c := range catalogue.All() {
		// Cases with steps run alone in both ways. Each way moves the cluster through the cells
		// the cases need (the second starts where the first ended: one restart fewer).
		if ok, _ := target.Supports(c); !ok || len(c.After) > 0 {
			continue
		}
		if os.Getenv("VOLPERM_KIND_BATCH_CASES") == "all" || i%25 == 0 {
			cases = append(cases, c)
		}
	}
	ct, err := target.Cluster(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	run := func(perCase bool) ([]cluster.Result, int, time.Duration) {
		ct.SetPodPerCase(perCase)
		pods, start := ct.PodStarts(), time.Now()
		res := ct.ObserveBatch(ctx, cases)
		return res, ct.PodStarts() - pods, time.Since(start)
	}
	batched, bPods, bTime := run(false)
	single, sPods, sTime := run(true)
	t.Logf("%d cases: batched %d pod starts in %s; one pod per case %d pod starts in %s (%.1fx the time)",
		len(cases), bPods, bTime.Round(100*time.Millisecond), sPods, sTime.Round(100*time.Millisecond), sTime.Seconds()/bTime.Seconds())
	if sPods <= bPods {
		t.Errorf("one pod per case started %d pods, batched %d", sPods, bPods)
	}
	for i, c := range cases {
		if batched[i].Err != nil || single[i].Err != nil {
			t.Errorf("%s: batched error %v, one pod per case error %v", c.Name, batched[i].Err, single[i].Err)
			continue
		}
		if d := framework.Diff(batched[i].Observation, single[i].Observation); len(d) > 0 {
			t.Errorf("%s: batched and one pod per case differ:\n%s", c.Name, strings.Join(d, "\n"))
		}
	}
}
