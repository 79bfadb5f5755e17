package kind

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// RecordedClusters are the clusters named by the records of the runs whose TMPDIR is tmpdir:
// what `volperm cleanup` deletes once such a run is dead (kill_e2e_test.go).
func RecordedClusters(tmpdir string) []string {
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(tmpdir, stateDirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, stateFile))
		if err != nil {
			continue
		}
		var s state
		if json.Unmarshal(b, &s) == nil {
			out = append(out, s.Clusters...)
		}
	}
	return out
}
