package kind

import "github.com/volperm/volperm/framework/sweep"

// RecordedClusters are the clusters named by the records of the runs whose TMPDIR is tmpdir:
// what `volperm cleanup` deletes once such a run is dead (kill_e2e_test.go).
func RecordedClusters(tmpdir string) []string {
	var out []string
	for _, f := range sweep.Records[state](tmpdir, stateDirPrefix, stateFile) {
		out = append(out, f.Record.Clusters...)
	}
	return out
}
