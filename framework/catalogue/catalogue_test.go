package catalogue

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/framework/oracle"
)

func TestAllIsWellFormed(t *testing.T) {
	all := All()
	if len(all) < 2000 {
		t.Errorf("catalogue has %d cases, want >= 2000", len(all))
	}
	names := map[string]bool{}
	areas := map[framework.Area]int{}
	profiles := map[framework.Profile]int{}
	rank := map[framework.Area]int{}
	for i, a := range framework.Areas {
		rank[a] = i
	}
	for i, c := range all {
		if names[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		names[c.Name] = true
		areas[c.Area]++
		profiles[c.Profile]++
		if err := c.Validate(); err != nil {
			t.Errorf("invalid case: %v", err)
		}
		if c.Description == "" {
			t.Errorf("case %q has no description", c.Name)
		}
		if i > 0 && rank[all[i-1].Area] > rank[c.Area] {
			t.Errorf("case %q (%s) after a case of area %s: not in area order", c.Name, c.Area, all[i-1].Area)
		}
		if c.Pod != nil && (c.Pod.Name == "" || len(c.Pod.Spec.Containers) == 0) {
			t.Errorf("case %q is not Complete()d", c.Name)
		}
	}
	for _, a := range framework.Areas {
		if areas[a] == 0 {
			t.Errorf("no case of area %s", a)
		}
	}
	for _, p := range framework.Profiles {
		if profiles[p] == 0 {
			t.Errorf("no case of profile %s", p)
		}
	}
	t.Logf("%d cases; per area %v; per profile %v", len(all), areas, profiles)
}

func TestAllIsStableAndFresh(t *testing.T) {
	a, b := All(), All()
	if len(a) != len(b) {
		t.Fatalf("two calls give %d and %d cases", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			t.Fatalf("order differs at %d: %q vs %q", i, a[i].Name, b[i].Name)
		}
	}
	// Changing one call's cases must not change the next call's.
	for _, c := range a {
		for k := range c.Sources {
			c.Sources[k]["changed"] = "x"
		}
		if p := c.FlexVolumePolicy; p != nil && len(p.AllowedDrivers) > 0 {
			p.AllowedDrivers[0] = "changed"
		}
	}
	for _, c := range All() {
		for k, m := range c.Sources {
			if _, ok := m["changed"]; ok {
				t.Fatalf("case %q: sources[%q] shared between calls", c.Name, k)
			}
		}
		if p := c.FlexVolumePolicy; p != nil && len(p.AllowedDrivers) > 0 && p.AllowedDrivers[0] == "changed" {
			t.Fatalf("case %q: flexVolume policy shared between calls", c.Name)
		}
	}
}

func TestEmptyDirSweepCoversEveryModeOnEveryMedium(t *testing.T) {
	seen := map[string]int{} // "medium/mode" -> count
	for _, c := range Filter(All(), framework.AreaEmptyDir) {
		if c.AdmissionOnly || len(c.Pod.Spec.Volumes) != 1 || c.Pod.Spec.SecurityContext != nil || len(c.Probes) > 0 {
			continue
		}
		v := c.Pod.Spec.Volumes[0].EmptyDir
		if v == nil || v.Mode == nil || !c.Gates.APIServer[framework.GateEmptyDirVolumeMode] || !c.Gates.Kubelet[framework.GateEmptyDirVolumeMode] {
			continue
		}
		seen[fmt.Sprintf("%s/%o", v.Medium, *v.Mode)]++
	}
	for _, m := range []corev1.StorageMedium{"", "Memory", "HugePages-2Mi"} {
		for mode := 0; mode <= 01777; mode++ {
			if n := seen[fmt.Sprintf("%s/%o", m, mode)]; n != 1 {
				t.Errorf("medium %q mode %#o: %d sweep cases, want 1", m, mode, n)
			}
		}
	}
	if len(seen) != 3*1024 {
		t.Errorf("sweep has %d medium/mode pairs, want 3072", len(seen))
	}
}

// The HugePages pod must ask for 2Mi pages, or hugetlbfs has no page size (v1.37
// getPageSizeMountOption); only a case about that very failure may leave the request out.
func TestHugePagesPodsRequestPages(t *testing.T) {
	n := 0
	for _, c := range All() {
		if c.Pod == nil || len(c.Pod.Spec.Volumes) == 0 || c.Pod.Spec.Volumes[0].EmptyDir == nil || c.Pod.Spec.Volumes[0].EmptyDir.Medium != "HugePages-2Mi" {
			continue
		}
		if vols := oracle.Expect(c).Volumes; len(vols) > 0 && strings.Contains(vols[0].SetUp, "no resource request for huge pages") {
			continue
		}
		n++
		ctr := c.Pod.Spec.Containers[0]
		hp, mem := ctr.Resources.Requests["hugepages-2Mi"], ctr.Resources.Requests[corev1.ResourceMemory]
		if hp.String() != "2Mi" || mem.IsZero() || len(ctr.VolumeMounts) != 1 {
			t.Errorf("case %q: container %+v", c.Name, ctr)
		}
	}
	if n < 1024 {
		t.Errorf("%d HugePages cases, want >= 1024", n)
	}
}

func TestHostPathMatrixIs8x11(t *testing.T) {
	cells := map[string]int{}
	for _, c := range Filter(All(), framework.AreaHostPath) {
		if len(c.Labels) == 0 || c.Labels[0] != "matrix" {
			continue
		}
		hp := c.Pod.Spec.Volumes[0].HostPath
		var at framework.HostObject // the object the pod's path names
		for _, h := range c.Host {
			if h.Path == hp.Path {
				at = h
			}
		}
		what := string(at.Kind)
		if at.Kind == framework.KindSymlink {
			for _, h := range c.Host {
				if h.Path == at.Target {
					what = "symlink->" + string(h.Kind)
				}
			}
		}
		cells[fmt.Sprintf("%q/%s", *hp.Type, what)]++
	}
	types := []string{"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"}
	objects := []string{"nothing", "directory", "file", "socket", "chardev", "blockdev",
		"symlink->directory", "symlink->file", "symlink->socket", "symlink->chardev", "symlink->blockdev"}
	for _, ty := range types {
		for _, o := range objects {
			if n := cells[fmt.Sprintf("%q/%s", ty, o)]; n != 1 {
				t.Errorf("type %q with %s: %d cases, want 1", ty, o, n)
			}
		}
	}
	if len(cells) != 88 {
		t.Errorf("matrix has %d cells, want 88", len(cells))
	}
}

// Spot checks that the canonical manifests are in the catalogue with what their seed says.
func TestCanonicalCases(t *testing.T) {
	byName := map[string]*framework.Case{}
	for _, c := range All() {
		byName[c.Name] = c
	}
	tests := []struct {
		name  string
		check func(*framework.Case) bool
	}{
		{"emptyDir mode 01777 on medium Memory gives /tmp behaviour to uids 1001 and 1002 (KEP story 2)", func(c *framework.Case) bool {
			return *c.Pod.Spec.Volumes[0].EmptyDir.Mode == 01777 && c.Pod.Spec.Volumes[0].EmptyDir.Medium == "Memory" && len(c.Probes) == 5
		}},
		{"emptyDir mode 0750 keeps uid 1003 from listing and creating (KEP story 1)", func(c *framework.Case) bool {
			return *c.Pod.Spec.Volumes[0].EmptyDir.Mode == 0750 && c.Probes[0].As.UID == 1003
		}},
		{"ssh key secret with defaultMode 256 and fsGroup 2000, with preservePermissions (seed 002)", func(c *framework.Case) bool {
			return *c.Pod.Spec.Volumes[0].Secret.DefaultMode == 0400 && c.PreservePermissions[0] == "test-secret" && c.Profile == framework.ProfileProposal
		}},
		{"the blog's six files in a flexVolume with fsGroup 2000, chmod'ed by a container, after a kubelet restart", func(c *framework.Case) bool {
			return len(c.Storage["data"]) == 6 && c.After[2].Chmod.Mode == 0410 && c.After[6].RestartKubelet
		}},
		{"hostPath type Socket for /var/run/docker.sock with a socket there", func(c *framework.Case) bool {
			return c.Host[0].Kind == framework.KindSocket && *c.Pod.Spec.Volumes[0].HostPath.Type == corev1.HostPathSocket
		}},
		{"flexVolume allowlist of DigitalOcean only denies a cifs volume (seed 004)", func(c *framework.Case) bool {
			return c.AdmissionOnly && c.FlexVolumePolicy.AllowedDrivers[0] == "digitalocean/flexvolume"
		}},
		{"emptyDir mode 0750 in the skew cell apiserver on, kubelet off", func(c *framework.Case) bool {
			return c.Gates.APIServer[framework.GateEmptyDirVolumeMode] && !c.Gates.Kubelet[framework.GateEmptyDirVolumeMode]
		}},
		// generated ones named in the brief
		{"emptyDir mode 01777 on medium Memory, both gates on", func(c *framework.Case) bool { return c.Profile == framework.ProfileAlpha }},
		{"hostPath type Socket with a symlink to a char device at the path", func(c *framework.Case) bool { return len(c.Host) == 2 }},
		{"fsGroup 2000 ORs 0660 into a 0410 file of a flexVolume after a kubelet restart", func(c *framework.Case) bool {
			return c.Storage["data"][0].Mode == 0410 && c.After[1].RestartKubelet
		}},
	}
	for _, tt := range tests {
		c, ok := byName[tt.name]
		if !ok {
			t.Errorf("case %q missing", tt.name)
			continue
		}
		if !tt.check(c) {
			t.Errorf("case %q is not what its seed says: %+v", tt.name, c)
		}
	}
}

// TestNeedsLabels: every case that needs more than a stock v1.37 cluster says so in a label,
// and no other case carries one.
func TestNeedsLabels(t *testing.T) {
	count := map[string]int{}
	for _, c := range All() {
		for _, l := range c.Labels {
			count[l]++
		}
		has := func(l string) bool { return slices.Contains(c.Labels, l) }
		huge := false
		if c.Pod != nil {
			for _, v := range c.Pod.Spec.Volumes {
				huge = huge || (v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), "HugePages"))
			}
		}
		if has(needs.HugePages) != huge {
			t.Errorf("%q: label %s is %v, HugePages medium %v", c.Name, needs.HugePages, has(needs.HugePages), huge)
		}
		proposal := len(c.PreservePermissions)+len(c.OldPreservePermissions) > 0 ||
			c.Gates.APIServer[framework.GatePreservePermissions] || c.Gates.Kubelet[framework.GatePreservePermissions]
		if has(needs.PreservePermissions) != proposal {
			t.Errorf("%q: label %s does not match its preservePermissions", c.Name, needs.PreservePermissions)
		}
		if has(needs.PodUpdate) != (c.OldPod != nil) {
			t.Errorf("%q: label %s does not match its oldPod", c.Name, needs.PodUpdate)
		}
	}
	// 1024 swept modes and 2 canonical cases on HugePages (emptydir.go, manifests/cases).
	if count[needs.HugePages] < 1025 || count[needs.PreservePermissions] == 0 || count[needs.PodUpdate] == 0 {
		t.Errorf("label counts %v", count)
	}
}
