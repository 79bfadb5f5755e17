package probe

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
)

func TestMain(m *testing.M) {
	MaybeRunChild()
	os.Exit(m.Run())
}

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root) // probes as other uids need root
}

// The KEP-5502 user story 2: in a 01777 dir only the owner deletes or renames (seed 000).
func TestStickyDirectoryAsRealUIDs(t *testing.T) {
	requireRoot(t)
	base := caseroottest.TempDir(t)
	vol := filepath.Join(base, "vol")
	if err := os.Mkdir(vol, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, 0777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	a := framework.User{UID: 1001, GID: 1001}
	b := framework.User{UID: 1002, GID: 1002}
	probes := []framework.Probe{
		{Name: "A creates", Volume: "v", As: a, Op: framework.OpCreate, Path: "a"},
		{Name: "B deletes", Volume: "v", As: b, Op: framework.OpDelete, Path: "a"},
		{Name: "B renames", Volume: "v", As: b, Op: framework.OpRename, Path: "a", To: "b"},
		{Name: "B lists", Volume: "v", As: b, Op: framework.OpList, Path: "."},
		{Name: "A deletes", Volume: "v", As: a, Op: framework.OpDelete, Path: "a"},
		{Name: "A deletes again", Volume: "v", As: a, Op: framework.OpDelete, Path: "a"},
	}
	got, err := Run(context.Background(), probes, map[string]string{"v": vol})
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ProbeResult{
		{Name: "A creates", Allowed: true},
		{Name: "B deletes", Errno: "EPERM"},
		{Name: "B renames", Errno: "EPERM"},
		{Name: "B lists", Allowed: true},
		{Name: "A deletes", Allowed: true},
		{Name: "A deletes again", Errno: "ENOENT"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("probe %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// KEP-5502 user story 1: 0750 shuts out everyone but owner and group (seed 000).
func TestRestrictedDirectoryDeniesOthers(t *testing.T) {
	requireRoot(t)
	base := caseroottest.TempDir(t)
	vol := filepath.Join(base, "vol")
	if err := os.Mkdir(vol, 0750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(vol, 0, 2000); err != nil {
		t.Fatal(err)
	}
	other := framework.User{UID: 1003, GID: 1003}
	member := framework.User{UID: 1004, GID: 1004, Groups: []int64{2000}}
	got, err := Run(context.Background(), []framework.Probe{
		{Name: "other lists", Volume: "v", As: other, Op: framework.OpList, Path: "."},
		{Name: "other creates", Volume: "v", As: other, Op: framework.OpCreate, Path: "x"},
		{Name: "member lists", Volume: "v", As: member, Op: framework.OpList, Path: "."},
		{Name: "member creates", Volume: "v", As: member, Op: framework.OpCreate, Path: "x"},
	}, map[string]string{"v": vol})
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ProbeResult{
		{Name: "other lists", Errno: "EACCES"},
		{Name: "other creates", Errno: "EACCES"},
		{Name: "member lists", Allowed: true},
		{Name: "member creates", Errno: "EACCES"}, // 0750: the group has no write bit
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("probe %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestPathsMayNotLeaveTheVolume(t *testing.T) {
	for _, p := range []string{"/etc/passwd", "..", "../x", "a/../../x"} {
		r := Do(t.TempDir(), framework.Probe{Name: "p", Op: framework.OpRead, Path: p})
		if r.Allowed || r.Errno == "" {
			t.Errorf("path %q: got %+v, want a refusal", p, r)
		}
	}
}
