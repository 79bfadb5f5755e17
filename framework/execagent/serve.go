package execagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/framework/sandbox"
	"github.com/volperm/volperm/hostfeature"
)

// Agent modes (VOLPERM_AGENT_MODE): auto tries `AGENT serve` once and falls back to a process per
// call when the agent does not answer hello; serve requires it; per-call never tries.
const (
	ModeAuto    = "auto"
	ModeServe   = "serve"
	ModePerCall = "per-call"
)

// EnvAgentMode chooses the mode.
const EnvAgentMode = "VOLPERM_AGENT_MODE"

// helloTimeout bounds how long auto mode waits for an agent's hello: an agent of protocol v1
// that reads stdin to its end would otherwise hold the first case for the whole time-out.
const helloTimeout = 5 * time.Second

// server is one long-lived `AGENT serve` process, its stdin, and its stdout read line by line.
type server struct {
	cmd    *osexec.Cmd
	stdin  io.WriteCloser
	lines  chan line
	stderr *limited
	token  string
	exited chan struct{}
	// features are those its hello listed (execproto.Hello).
	features []string
}

type line struct {
	b   []byte
	err error
}

// startServer starts `AGENT serve` and waits (at most wait) for its hello.
func (t *driver) startServer(wait time.Duration) (*server, error) {
	agent := t.agent
	s := &server{token: callToken(), lines: make(chan line, 1), stderr: newLimited(maxOutput), exited: make(chan struct{})}
	s.cmd = osexec.Command(agent, execproto.OpServe)
	s.cmd.Dir = "/"
	s.cmd.Env = append(os.Environ(), envCallToken+"="+s.token)
	s.cmd.Stderr = s.stderr
	s.cmd.WaitDelay = 500 * time.Millisecond
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := t.startCmd(s.cmd); err != nil {
		return nil, fmt.Errorf("start agent %s %s: %w", agent, execproto.OpServe, err)
	}
	go s.read(out)
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	b, err := s.roundTrip(ctx, execproto.Message{ProtocolVersion: execproto.VersionServe, Op: execproto.OpHello}, "hello")
	if err == nil {
		var h execproto.Hello
		if derr := json.Unmarshal(b, &h); derr != nil || h.ProtocolVersion != execproto.VersionServe || h.Op != execproto.OpHello {
			err = fmt.Errorf("answered hello with %q", tail(string(b)))
		}
		s.features = h.Features
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// read delivers stdout line by line; a line longer than maxOutput ends the stream.
func (s *server) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		var buf bytes.Buffer
		for {
			part, err := r.ReadSlice('\n')
			buf.Write(part)
			if buf.Len() > maxOutput {
				s.lines <- line{err: fmt.Errorf("wrote more than %d bytes on one line to stdout", maxOutput)}
				close(s.lines)
				return
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if buf.Len() > 0 {
					s.lines <- line{b: buf.Bytes()}
				}
				close(s.lines)
				return
			}
			break
		}
		s.lines <- line{b: bytes.TrimSpace(buf.Bytes())}
	}
}

// roundTrip writes m as one line and returns the agent's answer line; what is the call's name
// in verdicts.
func (s *server) roundTrip(ctx context.Context, m execproto.Message, what string) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if _, err := s.stdin.Write(append(b, '\n')); err != nil {
		return nil, s.exitErr(what, err)
	}
	select {
	case l, ok := <-s.lines:
		if !ok {
			return nil, s.exitErr(what, io.EOF)
		}
		if l.err != nil {
			s.stop()
			return nil, fmt.Errorf("agent %s %v: killed it", what, l.err)
		}
		return l.b, nil
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
}

// exitErr says why the agent stopped answering.
func (s *server) exitErr(what string, cause error) error {
	select {
	case <-s.exited:
	case <-time.After(time.Second):
	}
	if st := s.cmd.ProcessState; st != nil {
		return fmt.Errorf("agent %s: the serving agent exited with status %d: %s", what, st.ExitCode(), tail(s.stderr.String()))
	}
	return fmt.Errorf("agent %s: the serving agent stopped answering: %v", what, cause)
}

// alive reports whether the process still runs.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop closes stdin (a serving agent exits then), kills the process group if it has not exited
// within a second, and kills whatever it left running.
func (s *server) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	killSurvivors(s.token, 0)
}

// driver runs one agent executable: one long-lived `AGENT serve` for the run when the agent
// serves (or must: VOLPERM_AGENT_MODE), else a process per call. Both halves of an exec target
// (Node, APIServer) drive their agent through one.
type driver struct {
	agent   string
	timeout time.Duration
	// work is the driver's directory (volperm-exec-*, a case root of the run's work dir): the
	// agent's TMPDIR is below it and, for the node half, every case root. outer made it.
	work  string
	outer *caseroot.Roots
	// sandbox starts the agent's processes where they may write only what spec says
	// (framework/sandbox); nil when they run without one, for the reason noSandbox.
	sandbox   *sandbox.Sandbox
	spec      sandbox.Spec
	noSandbox string

	mu   sync.Mutex
	mode string
	srv  *server
	// callMu makes calls one at a time: a serving agent's answers come back in order on one
	// stdout, and a batched pair may admit from several goroutines.
	callMu sync.Mutex
	// servedOnce: the agent answered hello once; notServing says why auto mode fell back.
	servedOnce bool
	notServing string
	// helloAsked: driven a process per call, the agent was asked `AGENT hello` once; perCall are
	// the features it listed, noHello why it listed none.
	helloAsked bool
	perCall    []string
	noHello    string
}

// newDriver checks the agent path and the environment knobs (VOLPERM_AGENT_TIMEOUT, a Go
// duration; VOLPERM_AGENT_MODE; VOLPERM_AGENT_WRITABLE; VOLPERM_AGENT_SANDBOX) and makes the
// driver's work dir in opts.WorkDir. node: the agent sets volumes up below the work dir, which
// is then a shared mount, so that the harness sees what the agent mounts (sandbox.MakeShared).
func newDriver(opts framework.TargetOptions, node bool) (*driver, error) {
	d, err := checkAgent(opts.Arg)
	if err != nil {
		return nil, err
	}
	var writable []string
	if v := os.Getenv(EnvWritable); v != "" {
		for _, p := range strings.Split(v, ":") {
			if !filepath.IsAbs(p) {
				return nil, fmt.Errorf("%s=%q: %q is not an absolute path: list absolute paths separated by ':'", EnvWritable, v, p)
			}
			writable = append(writable, filepath.Clean(p))
		}
	}
	work := opts.WorkDir
	if work == "" {
		// tmpfs where the agent may execute what it writes: 30% faster than ext4 (docs/bench.md)
		work = caseroot.ScratchForAnyProgram()
	}
	if d.outer, err = caseroot.New(work); err != nil {
		return nil, err
	}
	if d.work, err = d.outer.Make("volperm-exec-"); err != nil {
		return nil, err
	}
	tmp := filepath.Join(d.work, "tmp")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		return nil, errors.Join(err, d.close())
	}
	d.noSandbox = sandbox.Off()
	if d.noSandbox != "" {
		if hostfeature.Required(hostfeature.MountSetattr) && os.Getenv(sandbox.EnvOff) != "off" {
			return nil, errors.Join(fmt.Errorf("exec agents run in a sandbox (docs/exec-protocol.md), and %s", d.noSandbox), d.close())
		}
		return d, nil
	}
	d.spec = sandbox.Spec{Writable: writable, TmpDir: tmp}
	if node {
		if err := sandbox.MakeShared(d.work); err != nil {
			return nil, errors.Join(err, d.close())
		}
		d.spec.Shared = []string{d.work}
	} else {
		d.spec.Writable = append(d.spec.Writable, d.work)
	}
	if d.sandbox, err = sandbox.New(d.spec); err != nil {
		return nil, errors.Join(err, d.close())
	}
	return d, nil
}

// EnvWritable lists (':'-separated) files and directories outside its work dir that a sandboxed
// agent may write, such as a log (docs/exec-protocol.md "The sandbox").
const EnvWritable = "VOLPERM_AGENT_WRITABLE"

// startCmd starts an agent process: in the driver's sandbox, unless it runs without one.
func (t *driver) startCmd(cmd *osexec.Cmd) error {
	subreaper() // before the agent starts: what it leaves is re-parented here (survivors.go)
	if t.sandbox == nil {
		return cmd.Start()
	}
	return t.sandbox.Start(cmd)
}

// close ends the sandbox and removes the driver's work dir (unmounting it first).
func (t *driver) close() error {
	if t.sandbox != nil {
		t.sandbox.Close()
	}
	if t.work == "" {
		return nil
	}
	return t.outer.Remove(t.work)
}

// checkAgent checks the agent path and the knobs of how it is driven.
func checkAgent(arg string) (*driver, error) {
	if arg == "" {
		return nil, fmt.Errorf("target exec needs the agent's path: --target exec:/path/to/agent")
	}
	agent, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(agent)
	if err != nil {
		return nil, fmt.Errorf("exec agent %s: %w: give the path of an executable", arg, err)
	}
	if st.IsDir() || st.Mode().Perm()&0111 == 0 {
		return nil, fmt.Errorf("exec agent %s is not an executable file: chmod +x it or give another path", arg)
	}
	timeout := DefaultTimeout
	if v := os.Getenv(EnvTimeout); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil || timeout <= 0 {
			return nil, fmt.Errorf(EnvTimeout+"=%q is not a positive duration: write e.g. 30s or 2m", v)
		}
	}
	mode := os.Getenv(EnvAgentMode)
	switch mode {
	case "":
		mode = ModeAuto
	case ModeAuto, ModeServe, ModePerCall:
	default:
		return nil, fmt.Errorf("%s=%q: write %s, %s or %s", EnvAgentMode, mode, ModeAuto, ModeServe, ModePerCall)
	}
	return &driver{agent: agent, timeout: timeout, mode: mode}, nil
}

// details describe the agent and how it is driven, for reports.
func (t *driver) details() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := map[string]string{"agent": t.agent, "timeout": t.timeout.String(), "mode": t.mode, "protocol": execproto.Version,
		"sandbox": "every mount read-only but " + strings.Join(append(append([]string{}, t.spec.Shared...), t.spec.Writable...), ", ")}
	if t.noSandbox != "" {
		d["sandbox"] = "off: " + t.noSandbox
	}
	if t.servedOnce {
		d["mode"], d["protocol"] = ModeServe, execproto.VersionServe
	}
	if t.notServing != "" {
		d["mode"] = ModePerCall + " (the agent does not serve: " + t.notServing + ")"
	}
	return d
}

// stop stops the serving agent, if one runs.
func (t *driver) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.srv != nil {
		t.srv.stop()
		t.srv = nil
	}
}

// callMessage has the agent answer m (setup or teardown with m.Request, admit with m.Admit): a
// line to the serving agent, or `AGENT op` with the request on stdin. It returns the answer and
// the protocol version it must carry: v2 when served and for admit, v1 for a setup or teardown
// per call.
func (t *driver) callMessage(ctx context.Context, m execproto.Message) ([]byte, string, error) {
	t.callMu.Lock()
	defer t.callMu.Unlock()
	srv, err := t.serving()
	if err != nil {
		return nil, "", err
	}
	if srv != nil {
		out, err := t.callServing(ctx, srv, m)
		return out, execproto.VersionServe, err
	}
	if m.Admit != nil {
		a := *m.Admit
		a.ProtocolVersion = execproto.VersionServe
		in, err := json.Marshal(&a)
		if err != nil {
			return nil, "", err
		}
		out, err := t.callProcess(ctx, m.Op, "/", in)
		return out, execproto.VersionServe, err
	}
	in, err := json.Marshal(m.Request)
	if err != nil {
		return nil, "", err
	}
	out, err := t.callProcess(ctx, m.Op, m.Request.StateDir, in)
	return out, execproto.Version, err
}

// serving returns the long-lived agent to call, starting it when none runs; nil means a process
// per call (mode per-call, or auto with an agent that does not serve).
func (t *driver) serving() (*server, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mode == ModePerCall {
		return nil, nil
	}
	if t.srv != nil && t.srv.alive() {
		return t.srv, nil
	}
	wait := t.timeout
	if t.mode == ModeAuto && !t.servedOnce && wait > helloTimeout {
		wait = helloTimeout
	}
	srv, err := t.startServer(wait)
	if err != nil {
		if t.mode == ModeAuto && !t.servedOnce {
			// Not an agent that serves (protocol v1): a process per call from now on.
			t.mode, t.notServing = ModePerCall, err.Error()
			return nil, nil
		}
		return nil, fmt.Errorf("agent %s: %v", execproto.OpServe, err)
	}
	t.srv, t.servedOnce = srv, true
	return srv, nil
}

// callServing is callMessage in the long-lived mode: the same verdicts as a process per call.
func (t *driver) callServing(ctx context.Context, srv *server, m execproto.Message) ([]byte, error) {
	m.ProtocolVersion = execproto.VersionServe
	if m.Request != nil {
		r := *m.Request
		r.ProtocolVersion = execproto.VersionServe
		m.Request = &r
	}
	if m.Admit != nil {
		a := *m.Admit
		a.ProtocolVersion = execproto.VersionServe
		m.Admit = &a
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	out, err := srv.roundTrip(ctx, m, m.Op)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, t.timeoutErr(m.Op)
		}
		return nil, err
	}
	if left := killSurvivors(srv.token, srv.cmd.Process.Pid); len(left) > 0 {
		return nil, survivorsErr(m.Op, left)
	}
	return out, nil
}

// hasFeature reports whether the agent implements the optional feature f of the protocol
// (execproto.Hello): the serving agent's hello lists it, or, driven a process per call, the
// answer of `AGENT hello`, asked once (an agent of protocol v1 does not know it: it lists
// nothing). When it does not, why says so for a "not run" reason.
func (t *driver) hasFeature(f string) (ok bool, why string) {
	t.callMu.Lock()
	defer t.callMu.Unlock()
	srv, err := t.serving()
	if err != nil {
		return false, err.Error()
	}
	listed := func(fs []string) bool {
		for _, x := range fs {
			if x == f {
				return true
			}
		}
		return false
	}
	if srv != nil {
		if listed(srv.features) {
			return true, ""
		}
		return false, fmt.Sprintf("its hello lists no feature %q (it lists %q)", f, srv.features)
	}
	if !t.helloAsked {
		t.helloAsked = true
		t.perCall, t.noHello = t.askHello()
	}
	if listed(t.perCall) {
		return true, ""
	}
	if t.noHello != "" {
		return false, t.noHello
	}
	return false, fmt.Sprintf("its answer to `AGENT hello` lists no feature %q (it lists %q)", f, t.perCall)
}

// askHello is `AGENT hello` (a process per call): the features the agent lists, or why it
// lists none (an agent of protocol v1 exits non-zero on an operation it does not know).
func (t *driver) askHello() ([]string, string) {
	in, err := json.Marshal(execproto.Message{ProtocolVersion: execproto.Version, Op: execproto.OpHello})
	if err != nil {
		return nil, err.Error()
	}
	out, err := t.callProcess(context.Background(), execproto.OpHello, "/", in)
	if err != nil {
		return nil, "it does not answer `AGENT hello`: " + err.Error()
	}
	var h execproto.Hello
	if err := decode(out, &h, execproto.Version); err != nil || h.Op != execproto.OpHello {
		return nil, fmt.Sprintf("its answer to `AGENT hello` is not a hello: %q", tail(string(out)))
	}
	return h.Features, ""
}
