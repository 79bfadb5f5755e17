package kind

import (
	"context"
	"os"
	"testing"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
)

// A dead run's record is swept (its directory removed: it names no cluster here, so no engine is
// needed), but one that ended with --keep handed its clusters and their kubeconfigs to the user:
// the sweeper leaves it (state.Kept).
func TestSweepLeavesKeptClusters(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := owner.Self()
	dead.StartTime++ // the same pid, started at another time: a run that is gone
	record := func(s state) string {
		dir, err := os.MkdirTemp("", stateDirPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeState(dir, s); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := record(state{Owner: dead})
	kept := record(state{Owner: dead, Clusters: []string{"volperm-kept-test"}, Kept: true})
	found, err := sweepClusters(context.Background(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead run's directory %s: %v; want it removed", gone, err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the kept run's directory %s: %v; want it left", kept, err)
	}
	for _, f := range found {
		if f != "directory "+gone+" of "+dead.String() {
			t.Errorf("found %q: want only the dead run's directory", f)
		}
	}
}
