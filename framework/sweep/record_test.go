package sweep_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
)

type rec struct {
	Owner owner.Mark `json:"owner"`
	Name  string     `json:"name"`
}

// Records of a dead run are found, with what they say; a live run's, an unreadable one and
// another prefix's are not.
func TestDeadRecords(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := owner.Self()
	dead.StartTime++ // the same pid, started at another time: a run that is gone
	write := func(prefix string, r any) string {
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			if err := sweep.WriteRecord(dir, ".rec.json", r); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	gone := write("volperm-test-", rec{dead, "gone"})
	write("volperm-test-", rec{owner.Self(), "live"})
	write("volperm-test-", nil)
	os.WriteFile(filepath.Join(write("volperm-test-", nil), ".rec.json"), []byte("{"), 0o600)
	write("volperm-other-", rec{dead, "other"})
	got := sweep.DeadRecords("volperm-test-", ".rec.json", func(r *rec) owner.Mark { return r.Owner })
	if len(got) != 1 || got[0].Dir != gone || got[0].Record.Name != "gone" {
		t.Fatalf("dead records %+v; want only %s", got, gone)
	}
}
