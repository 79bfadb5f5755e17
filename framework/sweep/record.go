package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/volperm/volperm/framework/owner"
)

// A record is what a run keeps, in a directory of its own under os.TempDir(), of resources
// outside this machine's case roots (a kind cluster, objects on a cluster), so that the next
// run can find them if this one is killed. Its file is not owner.MarkerFile: the case-root
// sweeper must leave the directory to the sweeper that reads the record.

// WriteRecord writes rec as JSON to dir/file, atomically: a reader sees the old or the new one.
func WriteRecord(dir, file string, rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, file+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, file))
}

// Recorded is a run's record, read from its directory.
type Recorded[R any] struct {
	Dir    string
	Record R
}

// Records reads dir/file of every directory root/prefix*, whoever's run it is. A directory
// without a readable record is left out.
func Records[R any](root, prefix, file string) []Recorded[R] {
	dirs, _ := filepath.Glob(filepath.Join(root, prefix+"*"))
	var out []Recorded[R]
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			continue
		}
		var r R
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		out = append(out, Recorded[R]{dir, r})
	}
	return out
}

// DeadRecords are the Records under os.TempDir() whose owner (mark of the record) is a run no
// longer alive. A directory without a readable record is not one of these: it is left alone.
func DeadRecords[R any](prefix, file string, mark func(*R) owner.Mark) []Recorded[R] {
	var out []Recorded[R]
	for _, f := range Records[R](os.TempDir(), prefix, file) {
		if m := mark(&f.Record); m.PID <= 0 || m.Alive() {
			continue
		}
		out = append(out, f)
	}
	return out
}
