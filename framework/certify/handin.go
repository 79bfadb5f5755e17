package certify

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
)

// A runner such as hydrophone copies back two files of the results dir, e2e.log and
// junit_01.xml (hydrophone v0.8.0 pkg/conformance/client/download.go FetchFiles). So that what
// it copied is a hand-in, `volperm runner` carries the hand-in's files (Files) in junit_01.xml,
// as a gzipped tar in one property of the test suite (HandInProperty); Verify reads a directory
// that has junit_01.xml and no conformance-report.yaml through it (docs/certify.md "Sonobuoy and
// hydrophone").
const (
	// RunnerJUnit is the runner's JUnit file, the one hydrophone copies back.
	RunnerJUnit = "junit_01.xml"
	// HandInProperty names the test-suite property of RunnerJUnit holding the hand-in: base64
	// of a gzipped tar of Files.
	HandInProperty = "volperm.hand-in"
)

// EmbedHandIn returns junit (the run's junit.xml) with the hand-in files of dir in its first
// test suite's properties.
func EmbedHandIn(junit []byte, dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range Files {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("the hand-in for %s: %w", RunnerJUnit, err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(raw); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	prop := fmt.Sprintf(`<property name="%s" value="%s"></property>`, HandInProperty, base64.StdEncoding.EncodeToString(buf.Bytes()))
	s := string(junit)
	suite := strings.Index(s, "<testsuite ")
	if suite < 0 {
		return nil, fmt.Errorf("%s: no <testsuite> to carry the hand-in", RunnerJUnit)
	}
	open := suite + strings.Index(s[suite:], ">") + 1
	// Ginkgo's JUnit reporter gives each suite its <properties> first: the hand-in joins them.
	if rest := strings.TrimLeft(s[open:], " \t\r\n"); strings.HasPrefix(rest, "<properties>") {
		at := len(s) - len(rest) + len("<properties>")
		return []byte(s[:at] + prop + s[at:]), nil
	}
	return []byte(s[:open] + "<properties>" + prop + "</properties>" + s[open:]), nil
}

// extractHandIn writes the hand-in carried by dir's RunnerJUnit into a new temporary directory
// and returns it; the caller removes it. A RunnerJUnit without one says what to run instead.
func extractHandIn(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, RunnerJUnit))
	if err != nil {
		return "", &UnreadableError{err}
	}
	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal(raw, &suites); err != nil {
		return "", &UnreadableError{fmt.Errorf("%s: %w", RunnerJUnit, err)}
	}
	value := ""
	for _, s := range suites.TestSuites {
		if v := s.Properties.WithName(HandInProperty); v != "" {
			value = v
			break
		}
	}
	if value == "" {
		return "", errNoHandIn
	}
	packed, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return "", &UnreadableError{fmt.Errorf("%s: property %s: %w", RunnerJUnit, HandInProperty, err)}
	}
	gz, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return "", &UnreadableError{fmt.Errorf("%s: property %s: %w", RunnerJUnit, HandInProperty, err)}
	}
	out, err := os.MkdirTemp("", "volperm-handin-")
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err == nil && (h.Typeflag != tar.TypeReg || !slices.Contains(Files, h.Name)) {
			err = fmt.Errorf("%s is not a file of a hand-in (%v)", h.Name, Files)
		}
		var body []byte
		if err == nil {
			body, err = io.ReadAll(io.LimitReader(tr, 256<<20))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(out, h.Name), body, 0o644)
		}
		if err != nil {
			os.RemoveAll(out)
			return "", &UnreadableError{fmt.Errorf("%s: property %s: %w", RunnerJUnit, HandInProperty, err)}
		}
	}
}

// errNoHandIn is a RunnerJUnit that carries no hand-in.
var errNoHandIn = errors.New(RunnerJUnit + " carries no hand-in: the runner writes one when it is given the implementation (under hydrophone: --extra-args --volperm-vendor=V,--volperm-product=P,--volperm-version=X; docs/certify.md)")

// verifyRunnerJUnit verifies a hydrophone hand-in: dir has RunnerJUnit (and e2e.log) only. The
// hand-in inside is verified as a directory would be, and RunnerJUnit's own cases must be the
// hand-in's junit.xml's, state for state: the file a reviewer sees is the file verified.
func verifyRunnerJUnit(dir, digest string) ([]string, error) {
	handIn, err := extractHandIn(dir)
	if errors.Is(err, errNoHandIn) {
		return []string{err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(handIn)
	problems, err := Verify(handIn, digest)
	if err != nil {
		return nil, err
	}
	outer, err := ReadJUnit(filepath.Join(dir, RunnerJUnit))
	if err != nil {
		return nil, &UnreadableError{err}
	}
	inner, err := ReadJUnit(filepath.Join(handIn, "junit.xml"))
	if err != nil {
		return nil, &UnreadableError{err}
	}
	for _, state := range []string{StatePassed, StateFailed, StateSkipped} {
		if a, b := names(outer, state), names(inner, state); !slices.Equal(a, b) {
			problems = append(problems, fmt.Sprintf("%s and the hand-in it carries disagree on the %s cases: %s", RunnerJUnit, state, diffNames(a, b, RunnerJUnit, "the hand-in's junit.xml")))
		}
	}
	return problems, nil
}
