package exec

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
	"strings"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework/execproto"
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
}

type line struct {
	b   []byte
	err error
}

// startServer starts `agent serve` and waits (at most wait) for its hello.
func startServer(agent string, wait time.Duration) (*server, error) {
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
	if err := s.cmd.Start(); err != nil {
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

// serving returns the long-lived agent to call, starting it when none runs; nil means a process
// per call (mode per-call, or auto with an agent that does not serve).
func (t *Node) serving() (*server, error) {
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
	srv, err := startServer(t.agent, wait)
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

// callServing is call in the long-lived mode: the same verdicts as a process per call.
func (t *Node) callServing(ctx context.Context, srv *server, op string, req *execproto.Request) ([]byte, error) {
	r := *req
	r.ProtocolVersion = execproto.VersionServe
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	out, err := srv.roundTrip(ctx, execproto.Message{ProtocolVersion: execproto.VersionServe, Op: op, Request: &r}, op)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("agent %s did not answer within %s: killed it (raise VOLPERM_AGENT_TIMEOUT if it is just slow)", op, t.timeout)
		}
		return nil, err
	}
	if left := killSurvivors(srv.token, srv.cmd.Process.Pid); len(left) > 0 {
		return nil, fmt.Errorf("agent %s left %d process(es) running (%s): killed them; an agent must exit with everything it started", op, len(left), strings.Join(left, ", "))
	}
	return out, nil
}
