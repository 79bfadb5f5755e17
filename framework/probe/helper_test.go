package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
)

// stickyCase is a probe sequence whose answers depend on the uid, the groups, the order of the
// probes and what earlier probes left: a 01777 dir with a 0640 file of group 2000.
func stickyCase(t *testing.T) ([]framework.Probe, map[string]string) {
	t.Helper()
	vol := filepath.Join(caseroottest.TempDir(t), "vol")
	if err := os.Mkdir(vol, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, 0777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "shared"), nil, 0640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(vol, "shared"), 0, 2000); err != nil {
		t.Fatal(err)
	}
	a := framework.User{UID: 1001, GID: 1001}
	b := framework.User{UID: 1002, GID: 1002, Groups: []int64{2000}}
	return []framework.Probe{
		{Name: "A creates", Volume: "v", As: a, Op: framework.OpCreate, Path: "a"},
		{Name: "A reads shared", Volume: "v", As: a, Op: framework.OpRead, Path: "shared"},
		{Name: "B reads shared", Volume: "v", As: b, Op: framework.OpRead, Path: "shared"},
		{Name: "B writes shared", Volume: "v", As: b, Op: framework.OpWrite, Path: "shared"},
		{Name: "B deletes a", Volume: "v", As: b, Op: framework.OpDelete, Path: "a"},
		{Name: "B creates a", Volume: "v", As: b, Op: framework.OpCreate, Path: "a"},
		{Name: "root mkdirs", Volume: "v", As: framework.User{}, Op: framework.OpMkdir, Path: "d"},
		{Name: "A deletes a", Volume: "v", As: a, Op: framework.OpDelete, Path: "a"},
		{Name: "A renames a", Volume: "v", As: a, Op: framework.OpRename, Path: "a", To: "b"},
		{Name: "A lists", Volume: "v", As: a, Op: framework.OpList, Path: "."},
	}, map[string]string{"v": vol}
}

// A helper answers as a one-shot child does, and is used again for the next probe set of its
// credential.
func TestHelperSameAsOneShot(t *testing.T) {
	requireRoot(t)
	StopHelpers()
	probes, roots := stickyCase(t)
	once, err := run(context.Background(), probes, roots, RunOnce)
	if err != nil {
		t.Fatal(err)
	}
	if HelpersRunning() != 0 {
		t.Fatalf("one-shot children left %d helpers", HelpersRunning())
	}
	for round := range 2 {
		probes, roots := stickyCase(t)
		got, err := Run(context.Background(), probes, roots)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, once) {
			t.Fatalf("round %d: helpers answered\n%+v\none-shot children\n%+v", round, got, once)
		}
		// A, B and root: one idle helper each, whatever the round.
		if n := HelpersRunning(); n != 3 {
			t.Errorf("round %d: %d idle helpers, want 3 (one per credential)", round, n)
		}
	}
	// The kernel's answers, so that the comparison above compares something.
	errnos := []string{"", "EACCES", "", "EACCES", "EPERM", "EEXIST", "", "", "ENOENT", ""}
	for i, r := range once {
		if r.Errno != errnos[i] || r.Allowed != (errnos[i] == "") {
			t.Errorf("probe %q: got %+v, want errno %q", r.Name, r, errnos[i])
		}
	}
	StopHelpers()
	if n := HelpersRunning(); n != 0 {
		t.Errorf("StopHelpers left %d", n)
	}
}

// A cancelled request ends its helper; the next request of that credential gets a new one.
func TestHelperCancelled(t *testing.T) {
	requireRoot(t)
	StopHelpers()
	probes, roots := stickyCase(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, probes, roots); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: got %v, want context.Canceled", err)
	}
	if n := HelpersRunning(); n != 0 {
		t.Errorf("a cancelled helper was kept: %d idle", n)
	}
	if _, err := Run(context.Background(), probes, roots); err != nil {
		t.Fatalf("after a cancelled run: %v", err)
	}
	StopHelpers()
}
