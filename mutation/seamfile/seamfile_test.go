package seamfile_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/volperm/volperm/mutation/seamfile"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Two writers on one file (the two agent processes of an exec target) each write a name once;
// Read gives every name once, in the order first written.
func TestWriterAndRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seams")
	if got, err := seamfile.Read(p); err != nil || got != nil {
		t.Fatalf("Read of a missing file: %v, %v; want no name and no error", got, err)
	}
	a, err := seamfile.Writer(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := seamfile.Writer(p)
	if err != nil {
		t.Fatal(err)
	}
	a("walk-no-chown")
	a("walk-no-chown")
	b("walk-no-chown")
	b("flex-dir-0755")
	a("policy-ignored")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "walk-no-chown\nwalk-no-chown\nflex-dir-0755\npolicy-ignored\n"; string(raw) != want {
		t.Errorf("file %q; want %q (one line per writer and name)", raw, want)
	}
	got, err := seamfile.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []mutant.Name{"walk-no-chown", "flex-dir-0755", "policy-ignored"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read %v; want %v", got, want)
	}
}

// A file that cannot be created is an error at once, not a silent recorder.
func TestWriterNeedsItsFile(t *testing.T) {
	if _, err := seamfile.Writer(filepath.Join(t.TempDir(), "missing", "seams")); err == nil {
		t.Fatal("Writer in a missing dir: no error")
	}
}
