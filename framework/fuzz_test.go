package framework_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/oracle"
)

// seedCases adds to f the documents of manifests/cases (each file whole, and each document alone)
// and every step-th case of the catalogue as a document.
func seedCases(f *testing.F, step int) {
	files, _ := filepath.Glob("../manifests/cases/*.yaml")
	if len(files) == 0 {
		f.Fatal("no case files under ../manifests/cases")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, d := range strings.Split(string(b), "\n---\n") {
			f.Add([]byte(d))
		}
	}
	for i, c := range catalogue.All() {
		if i%step != 0 {
			continue
		}
		b, err := framework.Document(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzLoadCases: the loader never panics, every error is one line naming the file, and what it
// accepts is valid, Complete()d, and loads again to the same cases.
func FuzzLoadCases(f *testing.F) {
	seedCases(f, 97)
	f.Fuzz(func(t *testing.T, data []byte) {
		var cases []*framework.Case
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			cases, err = framework.LoadCases("fuzz.yaml", data, framework.Gates{})
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("LoadCases took more than 5 s on %d bytes: %q", len(data), data)
		}
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "fuzz.yaml") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		for _, c := range cases {
			if err := c.Validate(); err != nil {
				t.Fatalf("accepted an invalid case: %v", err)
			}
			doc, err := framework.Document(c)
			if err != nil {
				t.Fatal(err)
			}
			again, err := framework.LoadCases("again.yaml", doc, framework.Gates{})
			if err != nil || len(again) != 1 {
				t.Fatalf("an accepted case does not load again: %v\n%s", err, doc)
			}
			d2, _ := framework.Document(again[0])
			if string(d2) != string(doc) {
				t.Fatalf("loading is not stable:\n%s\n%s", doc, d2)
			}
		}
	})
}

// FuzzExpect: the oracle never panics on a case the loader accepts, and the same case gives the
// same Observation (twice, and from a deep copy).
func FuzzExpect(f *testing.F) {
	seedCases(f, 29)
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := framework.LoadCases("fuzz.yaml", data, framework.Gates{})
		if err != nil {
			return
		}
		for _, c := range cases {
			first, err := json.Marshal(oracle.Expect(c))
			if err != nil {
				t.Fatal(err)
			}
			second, _ := json.Marshal(oracle.Expect(c.DeepCopy()))
			if string(first) != string(second) {
				t.Fatalf("case %q: two answers:\n%s\n%s", c.Name, first, second)
			}
		}
	})
}
