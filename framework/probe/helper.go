package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework"
)

// A helper is a long-lived probe child of one credential (uid, gid, groups): it answers one
// request (a JSON array of steps on one line) after another with one line of results, so that a
// run starts a child per credential instead of one per probe set (issue 16: the reference
// catalogue re-executed this 130 MB binary 103 times, 30 ms each). What a probe sees does not
// depend on it: the child's credentials, umask, working directory and mount namespace (the
// host's: it is started from an ordinary thread) are those of a one-shot child, and a probe
// opens and closes whatever it touches (TestHelperSameAsOneShot).

// EnvHelpers set to "off" runs every probe set in a child of its own (RunOnce), as before
// helpers: the bench's side that shows helpers change no answer (docs/bench.md).
const EnvHelpers = "VOLPERM_PROBE_HELPERS"

func init() {
	framework.RegisterEnv(framework.EnvVar{Name: EnvHelpers, Owner: "run", Meaning: "off runs each probe set in a child process of its own instead of one long-lived child per credential (docs/spec.md \"Probes\")"})
}

// helperIdle is how long an idle helper waits for its next request before the harness ends it.
const helperIdle = 20 * time.Second

// helperStderr bounds what the harness keeps of a helper's stderr.
const helperStderr = 4 << 10

// serveChild is a helper's loop: a request line in, a results line out, until stdin closes.
func serveChild() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := json.NewEncoder(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			steps, derr := DecodeSteps(bytes.NewReader(line))
			if derr != nil {
				fmt.Fprintf(os.Stderr, "volperm probe helper: read request: %v\n", derr)
				os.Exit(2)
			}
			results := make([]framework.ProbeResult, 0, len(steps))
			for _, s := range steps {
				results = append(results, Do(s.Root, s.Probe))
			}
			if err := out.Encode(results); err != nil {
				os.Exit(2)
			}
		}
		if err != nil {
			os.Exit(0) // stdin closed: the harness is done with this helper, or gone
		}
	}
}

type helper struct {
	key    string
	ns     *framework.IDMap
	user   framework.User
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *headBuffer
	timer  *time.Timer
}

// helperPool holds the idle helpers of each credential.
type helperPool struct {
	mu   sync.Mutex
	idle map[string][]*helper
}

var helpers = &helperPool{idle: map[string][]*helper{}}

func userKey(ns *framework.IDMap, u framework.User) string {
	var b strings.Builder
	if ns != nil {
		fmt.Fprintf(&b, "userns %d+%d ", ns.HostID, ns.Length)
	}
	b.WriteString(strconv.FormatInt(u.UID, 10) + ":" + strconv.FormatInt(u.GID, 10))
	for _, g := range u.Groups {
		b.WriteString("," + strconv.FormatInt(g, 10))
	}
	return b.String()
}

// get hands out an idle helper of user, or starts one.
func (p *helperPool) get(ns *framework.IDMap, user framework.User) (*helper, error) {
	key := userKey(ns, user)
	p.mu.Lock()
	if hs := p.idle[key]; len(hs) > 0 {
		h := hs[len(hs)-1]
		p.idle[key] = hs[:len(hs)-1]
		p.mu.Unlock()
		h.timer.Stop()
		return h, nil
	}
	p.mu.Unlock()
	return startHelper(key, ns, user)
}

// put makes h idle again; it ends after helperIdle without a request.
func (p *helperPool) put(h *helper) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle[h.key] = append(p.idle[h.key], h)
	h.timer = time.AfterFunc(helperIdle, func() { p.expire(h) })
}

// expire ends h if it is still idle (get may have taken it meanwhile).
func (p *helperPool) expire(h *helper) {
	p.mu.Lock()
	hs := p.idle[h.key]
	for i, x := range hs {
		if x == h {
			p.idle[h.key] = append(hs[:i:i], hs[i+1:]...)
			p.mu.Unlock()
			h.close()
			return
		}
	}
	p.mu.Unlock()
}

// StopHelpers ends every idle helper (a helper also ends by itself when this process does:
// its stdin closes).
func StopHelpers() {
	helpers.mu.Lock()
	all := helpers.idle
	helpers.idle = map[string][]*helper{}
	helpers.mu.Unlock()
	for _, hs := range all {
		for _, h := range hs {
			h.timer.Stop()
			h.close()
		}
	}
}

// HelpersRunning counts the helpers idle now (for tests).
func HelpersRunning() int {
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	n := 0
	for _, hs := range helpers.idle {
		n += len(hs)
	}
	return n
}

func startHelper(key string, ns *framework.IDMap, user framework.User) (*helper, error) {
	groups := make([]uint32, 0, len(user.Groups))
	for _, g := range user.Groups {
		groups = append(groups, uint32(g))
	}
	h := &helper{key: key, ns: ns, user: user, stderr: &headBuffer{max: helperStderr}}
	h.cmd = exec.Command("/proc/self/exe")
	h.cmd.Env = []string{childEnv + "=1"}
	h.cmd.Dir = "/"
	h.cmd.Stderr = h.stderr
	// No Pdeathsig: it fires when the thread that forked the child exits, not the process. The
	// helper ends when its stdin closes, which the kernel does when this process ends.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(user.UID), Gid: uint32(user.GID), Groups: groups},
	}
	if ns != nil {
		// A process of the pod's user namespace (one range for uids and gids, setgroups
		// allowed so that it has the pod's groups), as the runtime starts a container's.
		m := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(ns.HostID), Size: int(ns.Length)}}
		h.cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER
		h.cmd.SysProcAttr.UidMappings = m
		h.cmd.SysProcAttr.GidMappings = m
		h.cmd.SysProcAttr.GidMappingsEnableSetgroups = true
	}
	if os.Getuid() != 0 {
		// A process that is not root cannot change its user; it can probe as the user it is (a
		// cluster's probe pod whose containers all run as the pod's FsUser, framework/cluster).
		if err := runsAs(user); err != nil {
			return nil, err
		}
		h.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("probe helper as uid %d gid %d: %w", user.UID, user.GID, err)
	}
	h.out = bufio.NewReaderSize(out, 64<<10)
	return h, nil
}

// runsAs says why a process that is not root cannot probe as user: its uid, gid or
// supplementary groups (the primary gid aside) are not user's.
func runsAs(user framework.User) error {
	have, err := os.Getgroups()
	if err != nil {
		return fmt.Errorf("probe as uid %d: read this process's groups: %w", user.UID, err)
	}
	set := func(gs []int64, primary int64) []int64 {
		out := []int64{}
		for _, g := range gs {
			if g != primary && !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		slices.Sort(out)
		return out
	}
	haveGroups := make([]int64, 0, len(have))
	for _, g := range have {
		haveGroups = append(haveGroups, int64(g))
	}
	want, got := set(user.Groups, user.GID), set(haveGroups, int64(os.Getgid()))
	if int64(os.Getuid()) != user.UID || int64(os.Getgid()) != user.GID || !slices.Equal(want, got) {
		return fmt.Errorf("probe as uid %d gid %d groups %v: this process runs as uid %d gid %d groups %v and, not being root, cannot change them",
			user.UID, user.GID, want, os.Getuid(), os.Getgid(), got)
	}
	return nil
}

// do sends one request and reads its answer; on any failure, or when ctx ends first, h is ended
// and must not be used again.
func (h *helper) do(ctx context.Context, req []byte, n int) ([]framework.ProbeResult, error) {
	type answer struct {
		line []byte
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		if _, err := h.stdin.Write(append(req, '\n')); err != nil {
			done <- answer{err: err}
			return
		}
		line, err := h.out.ReadBytes('\n')
		done <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		h.kill()
		<-done
		return nil, ctx.Err()
	}
	if a.err != nil {
		h.kill()
		return nil, fmt.Errorf("probe helper as uid %d gid %d: %v: %s", h.user.UID, h.user.GID, a.err, strings.TrimSpace(h.stderr.String()))
	}
	results, err := DecodeResults(a.line, n)
	if err != nil {
		h.kill()
		return nil, fmt.Errorf("probe helper as uid %d: bad answer %q: %w", h.user.UID, a.line, err)
	}
	return results, nil
}

// close ends an idle helper: its stdin closes and it exits.
func (h *helper) close() {
	_ = h.stdin.Close()
	done := make(chan struct{})
	go func() { _ = h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.kill()
		<-done
	}
}

// kill ends a helper that failed or whose request was cancelled.
func (h *helper) kill() {
	_ = h.cmd.Process.Kill()
	_ = h.stdin.Close()
	go func() { _ = h.cmd.Wait() }()
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *headBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *headBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
