package kind_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
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
}

// TestKindEndToEnd builds (or reuses) the node image, creates a kind cluster per gate
// combination, runs e2eCases (the flexVolume ones under manifests/flexvolume-vap.yaml) and
// deletes the clusters. It needs root and a Docker engine
// (hack/docker-up.sh); set VOLPERM_KIND_E2E=1 to run it.
func TestKindEndToEnd(t *testing.T) {
	if os.Getenv("VOLPERM_KIND_E2E") != "1" {
		t.Skip("set VOLPERM_KIND_E2E=1 to create kind clusters (needs root and Docker)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	_, here, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(here), "..", "..", "..")
	opts := nodeimage.Options{ModuleDir: filepath.Join(repo, "build", "kindnode"), Log: testWriter{t}}
	probe, err := nodeimage.BuildProbeImage(ctx, opts, repo)
	if err != nil {
		t.Fatal(err)
	}
	opts.Preload = []string{probe}
	img, err := nodeimage.Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	target, err := kind.New(kind.Options{NodeImage: img.Image, ProbeImage: probe, Log: testWriter{t},
		Keep: os.Getenv("VOLPERM_KIND_KEEP") == "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := target.Close(); err != nil {
			t.Error(err)
		}
	}()

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

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
