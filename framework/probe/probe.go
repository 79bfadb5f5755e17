// Package probe runs behaviour checks (create, delete, rename, list, ...) inside a volume as a
// given uid/gid/groups. A check is one syscall made by a real process with those credentials:
// the current binary re-executed (/proc/self/exe) with the credentials set by the kernel, so the
// answer is the kernel's, not a model's.
package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/framework"
)

// childEnv marks a process as a probe child; its stdin holds request lines (helper.go).
const childEnv = "VOLPERM_PROBE_CHILD"

// Step is one probe with the directory of its volume on this host.
type Step struct {
	Root  string          `json:"root"`
	Probe framework.Probe `json:"probe"`
}

// MaybeRunChild must be the first call of every main() and TestMain() of a binary that runs
// probes: in a probe child (helper.go) it answers requests from stdin until stdin closes and
// exits; in any other process it returns at once.
func MaybeRunChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	syscall.Umask(022) // docs/spec.md "Probes": processes in the pod run with umask 022.
	serveChild()
}

// RunAs runs steps in order with user's credentials, in a helper of that credential
// (helper.go): a process that lives across probe sets, cases and targets of this run.
func RunAs(ctx context.Context, user framework.User, steps []Step) ([]framework.ProbeResult, error) {
	return runIn(ctx, nil, user, steps)
}

// runIn is RunAs in the user namespace ns (nil: the host's).
func runIn(ctx context.Context, ns *framework.IDMap, user framework.User, steps []Step) ([]framework.ProbeResult, error) {
	if os.Getenv(EnvHelpers) == "off" {
		return runOnce(ctx, ns, user, steps)
	}
	req, err := json.Marshal(steps)
	if err != nil {
		return nil, err
	}
	h, err := helpers.get(ns, user)
	if err != nil {
		return nil, err
	}
	results, err := h.do(ctx, req, len(steps))
	if err != nil {
		return nil, err
	}
	helpers.put(h)
	return results, nil
}

// RunOnce is RunAs in a child of its own that answers this one request and ends (the way before
// helpers, kept to prove that helpers change nothing: TestHelperSameAsOneShot).
func RunOnce(ctx context.Context, user framework.User, steps []Step) ([]framework.ProbeResult, error) {
	return runOnce(ctx, nil, user, steps)
}

func runOnce(ctx context.Context, ns *framework.IDMap, user framework.User, steps []Step) ([]framework.ProbeResult, error) {
	req, err := json.Marshal(steps)
	if err != nil {
		return nil, err
	}
	h, err := startHelper(userKey(ns, user), ns, user)
	if err != nil {
		return nil, err
	}
	results, err := h.do(ctx, req, len(steps))
	if err != nil {
		return nil, err
	}
	h.close()
	return results, nil
}

// Run runs every probe of c in order, each as its user, batching consecutive probes of one user
// into one request to a helper of that user (RunAs). roots maps a volume name to its directory
// on this host.
func Run(ctx context.Context, probes []framework.Probe, roots map[string]string) ([]framework.ProbeResult, error) {
	return run(ctx, probes, roots, RunAs)
}

// RunIn is Run by processes of the pod's user namespace ns: each probe's user is an id of ns
// (docs/spec.md "User namespaces"), and roots are the volumes' idmapped mounts.
func RunIn(ctx context.Context, probes []framework.Probe, roots map[string]string, ns framework.IDMap) ([]framework.ProbeResult, error) {
	return run(ctx, probes, roots, func(ctx context.Context, u framework.User, steps []Step) ([]framework.ProbeResult, error) {
		return runIn(ctx, &ns, u, steps)
	})
}

// run is Run with the way each user's steps run.
func run(ctx context.Context, probes []framework.Probe, roots map[string]string, runAs func(context.Context, framework.User, []Step) ([]framework.ProbeResult, error)) ([]framework.ProbeResult, error) {
	var out []framework.ProbeResult
	for i := 0; i < len(probes); {
		j := i
		var steps []Step
		for ; j < len(probes) && sameUser(probes[i].As, probes[j].As); j++ {
			root, ok := roots[probes[j].Volume]
			if !ok {
				return nil, fmt.Errorf("probe %q: volume %q was not set up", probes[j].Name, probes[j].Volume)
			}
			steps = append(steps, Step{Root: root, Probe: probes[j]})
		}
		res, err := runAs(ctx, probes[i].As, steps)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		i = j
	}
	return out, nil
}

func sameUser(a, b framework.User) bool {
	if a.UID != b.UID || a.GID != b.GID || len(a.Groups) != len(b.Groups) {
		return false
	}
	for i := range a.Groups {
		if a.Groups[i] != b.Groups[i] {
			return false
		}
	}
	return true
}

// Do runs one probe as the current process's identity, inside root.
func Do(root string, p framework.Probe) framework.ProbeResult {
	res := framework.ProbeResult{Name: p.Name}
	path, err := within(root, p.Path)
	if err == nil {
		err = do(root, path, p)
	}
	if err == nil {
		res.Allowed = true
		return res
	}
	res.Errno = errnoName(err)
	return res
}

func do(root, path string, p framework.Probe) error {
	switch p.Op {
	case framework.OpCreate:
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0644)
		if err != nil {
			return err
		}
		return f.Close()
	case framework.OpWrite, framework.OpRead:
		flag := os.O_RDONLY
		if p.Op == framework.OpWrite {
			flag = os.O_WRONLY
		}
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case framework.OpDelete:
		return syscall.Unlink(path)
	case framework.OpRename:
		to, err := within(root, p.To)
		if err != nil {
			return err
		}
		return syscall.Rename(path, to)
	case framework.OpList:
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Readdirnames(-1)
		return err
	case framework.OpExec:
		return execute(path)
	case framework.OpMkdir:
		return syscall.Mkdir(path, 0755)
	case framework.OpFill:
		return fill(path, p.Size)
	case framework.OpChmod:
		if p.Mode == nil {
			return syscall.EINVAL
		}
		return syscall.Chmod(path, *p.Mode)
	case framework.OpChown:
		if p.Owner == nil {
			return syscall.EINVAL
		}
		return syscall.Chown(path, int(p.Owner.UID), int(p.Owner.GID))
	}
	return fmt.Errorf("unknown probe op %q", p.Op)
}

// execute is the exec probe: execve(path) in a child with no arguments, no environment and
// no open files; ENOEXEC (a file the kernel cannot run: volperm's volumes hold no programs)
// is the kernel's permission granted. A program that did start is waited for.
func execute(path string) error {
	pid, err := syscall.ForkExec(path, []string{path}, &syscall.ProcAttr{Env: []string{}})
	if errors.Is(err, syscall.ENOEXEC) {
		return nil
	}
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(pid, &ws, 0, nil)
	return err
}

// within joins a probe path to root, refusing paths that leave it.
func within(root, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("probe path %q must be relative to the volume", rel)
	}
	clean := filepath.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("probe path %q leaves the volume", rel)
	}
	return filepath.Join(root, clean), nil
}

func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
		return fmt.Sprintf("errno %d", int(errno))
	}
	return err.Error()
}

// fill creates path and writes size zero bytes to it, as one process would with write(2) in
// 64 KiB pieces; the first error (ENOSPC past a tmpfs size, EINVAL on hugetlbfs) is the answer.
// The file stays, whatever was written of it.
func fill(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0644)
	if err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for size > 0 {
		n := min(size, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	return f.Close()
}
