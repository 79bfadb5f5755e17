package k8srelease

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGoCmdEndsItsGroup: when the caller's context ends, the go command and what it started
// (here the program `go run` runs; in a build, the compilers) are killed together, so nothing
// of an interrupted build runs on (docs/cleanup.md).
func TestGoCmdEndsItsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The go command's work directory goes here: none may be left.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module sleeper\n\ngo 1.24\n")
	write("main.go", `package main

import (
	"os"
	"strconv"
	"time"
)

func main() {
	os.WriteFile(os.Args[1], []byte(strconv.Itoa(os.Getpid())), 0o644)
	time.Sleep(time.Minute)
}
`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- goCmd(ctx, dir, io.Discard, "sleeping", "run", ".", pidFile) }()
	var pid int
	for deadline := time.Now().Add(2 * time.Minute); pid == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the program go run runs never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			pid, _ = strconv.Atoi(string(b))
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("goCmd returned no error for a command its context ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("goCmd did not return within 10 s of its context's end (pid %d runs on)", pid)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d, started by the go command, still runs after its context ended", pid)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the go command left %d entries in its TMPDIR (%s...)", len(left), left[0].Name())
	}
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
