package execagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volperm/volperm/framework/e2etest"
	"github.com/volperm/volperm/hostfeature"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/framework/targets/exec/agent"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// The test binary doubles as a family of agents, chosen by VOLPERM_TEST_AGENT: one that
// behaves, and one per kind of misbehaviour the target must give a verdict for.
func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	if mode := os.Getenv("VOLPERM_TEST_AGENT"); mode == "reference" {
		os.Exit(agent.Main(os.Args[len(os.Args)-1], os.Stdin, os.Stdout, os.Stderr))
	} else if mode != "" {
		os.Exit(testAgent(mode, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

func testAgent(mode, op string) int {
	if mode == "v1" || mode == "v2" {
		return olderAgent(mode, op) // older_test.go
	}
	if op == execproto.OpServe {
		if !strings.HasPrefix(mode, "serve-") {
			// A protocol v1 agent: it reads a request, finds none, and exits.
			fmt.Fprintln(os.Stderr, "unknown operation serve")
			return 2
		}
		return serveTestAgent(strings.TrimPrefix(mode, "serve-"))
	}
	if op == execproto.OpHello {
		if !strings.HasPrefix(mode, "userns") {
			fmt.Fprintln(os.Stderr, "unknown operation hello")
			return 2
		}
		_ = json.NewEncoder(os.Stdout).Encode(execproto.Hello{ProtocolVersion: execproto.Version, Op: execproto.OpHello, Features: []string{execproto.FeatureUserNamespaces}})
		return 0
	}
	var req execproto.Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "bad request:", err)
		return 2
	}
	return handleTestCall(mode, op, req, execproto.Version)
}

// serveTestAgent is a test agent in the long-lived mode: it answers hello, then each message as
// handleTestCall in mode does.
func serveTestAgent(mode string) int {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m execproto.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "bad message:", err)
			return 2
		}
		if m.Op == execproto.OpHello {
			h := execproto.Hello{ProtocolVersion: execproto.VersionServe, Op: execproto.OpHello}
			if strings.HasPrefix(mode, "userns") {
				h.Features = []string{execproto.FeatureUserNamespaces}
			}
			_ = json.NewEncoder(os.Stdout).Encode(h)
			continue
		}
		if code := handleTestCall(mode, m.Op, *m.Request, execproto.VersionServe); code != 0 {
			return code
		}
	}
	return 0
}

// handleTestCall answers one call in mode, as protocol version.
func handleTestCall(mode, op string, req execproto.Request, version string) int {
	answer := func(v any) int {
		_ = json.NewEncoder(os.Stdout).Encode(v)
		return 0
	}
	switch {
	case mode == "exit3":
		fmt.Fprintln(os.Stderr, "driver exploded")
		return 3
	case mode == "badjson":
		fmt.Println("this is not json")
		return 0
	case mode == "version":
		return answer(map[string]any{"protocolVersion": "volperm.dev/exec/v0", "volumes": []any{}})
	case mode == "sleep":
		time.Sleep(time.Minute)
		return 0
	case mode == "stray" && op == execproto.OpSetUp:
		_ = os.WriteFile(filepath.Join(filepath.Dir(req.StateDir), "volumes", "stray"), nil, 0644)
	case mode == "missing" && op == execproto.OpSetUp:
		return answer(execproto.SetUpResponse{ProtocolVersion: version})
	case mode == "flood" && op == execproto.OpSetUp:
		// A gigabyte on stdout, then a good answer.
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; i < 1024; i++ {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 0
			}
		}
	case (mode == "daemon" || mode == "holdstdout") && op == execproto.OpSetUp:
		// A detached child (its own session) that outlives the agent; "holdstdout" also keeps
		// the agent's stdout open.
		d := osexec.Command("/bin/sleep", "300")
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if mode == "holdstdout" {
			d.Stdout = os.Stdout
		}
		if err := d.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case mode == "chmodroot" && op == execproto.OpSetUp:
		_ = os.Chmod(filepath.Dir(req.StateDir), 0700)
	case mode == "procroot" && op == execproto.OpSetUp:
		// A write to the canary through /proc/self/root: the sandbox makes it fail (EROFS),
		// and this agent, like a careful one, fails its call with the error.
		if err := os.WriteFile("/proc/self/root"+os.Getenv("VOLPERM_TEST_CANARY"), []byte("agent"), 0o666); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case mode == "mountout" && op == execproto.OpSetUp:
		// A mount beside the canary, outside the agent's work dir: it stays in the agent's
		// mount namespace.
		if err := syscall.Mount("tmpfs", filepath.Dir(os.Getenv("VOLPERM_TEST_CANARY")), "tmpfs", 0, "size=1m"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case mode == "linkout" && op == execproto.OpSetUp:
		// A symlink and a hard link to the canary from inside the volume: the harness observes
		// the volume without following either, and removes both without touching the canary.
		canary := os.Getenv("VOLPERM_TEST_CANARY")
		for _, v := range req.Volumes {
			_ = os.MkdirAll(v.Dir, 0777)
			_ = os.Symlink(canary, filepath.Join(v.Dir, "out"))
			_ = os.Link(canary, filepath.Join(v.Dir, "hard"))
		}
	}
	if op == execproto.OpTearDown {
		for _, v := range req.Volumes {
			if mode != "mountleft" {
				_ = syscall.Unmount(v.Dir, 0)
			}
		}
		return answer(execproto.TearDownResponse{ProtocolVersion: version, OK: true})
	}
	resp := execproto.SetUpResponse{ProtocolVersion: version}
	for _, v := range req.Volumes {
		_ = os.Mkdir(v.Dir, 0777)
		_ = os.Chmod(v.Dir, 0777)
		if mode == "mountleft" {
			_ = syscall.Mount("tmpfs", v.Dir, "tmpfs", 0, "size=1m,mode=0777")
		}
		if strings.HasPrefix(mode, "userns") {
			// A file whose owner the pod's range does not map.
			far := filepath.Join(v.Dir, "far")
			_ = os.WriteFile(far, nil, 0644)
			_ = os.Chown(far, 70000, 70000)
		}
		resp.Volumes = append(resp.Volumes, execproto.VolumeResult{Name: v.Name, OK: true})
	}
	if strings.HasPrefix(mode, "userns") {
		// The pod's range: slot 3, or what the mode gets wrong.
		ns := execproto.UserNamespace{HostID: 3 << 16, Length: 1 << 16}
		switch mode {
		case "userns-none":
			return answer(resp)
		case "userns-zero":
			ns.HostID = 0
		case "userns-moves":
			ns.HostID += uint32(req.Attempt) << 16
		case "userns-stray":
			_ = os.WriteFile(filepath.Join(filepath.Dir(req.StateDir), runtimeDir, "stray"), nil, 0644)
		}
		resp.UserNamespace = &ns
	}
	return answer(resp)
}

// agentScript writes an executable that runs this test binary as the agent in mode.
func agentScript(t *testing.T, mode string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "agent-"+mode)
	script := fmt.Sprintf("#!/bin/sh\nVOLPERM_TEST_AGENT=%s exec %q \"$@\"\n", mode, self)
	if err := os.WriteFile(p, []byte(script), 0755); err != nil {
		t.Fatal(err)
	}
	return p
}

func emptyDirCase() *framework.Case {
	return &framework.Case{
		Name: "exec: emptyDir on the default medium", Area: framework.AreaEmptyDir, Profile: framework.ProfileConformance,
		Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}}},
	}
}

func TestVerdicts(t *testing.T) {
	e2etest.Gate(t)
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	t.Setenv("VOLPERM_AGENT_TIMEOUT", "2s")
	tests := []struct {
		mode string
		want string // "" = the case passes through the agent; "*" stands for any text
	}{
		{"good", ""},
		{"exit3", "agent setup exited with status 3: driver exploded"},
		{"badjson", `agent setup: invalid JSON on stdout`},
		{"version", `agent setup: agent speaks protocol version "volperm.dev/exec/v0"; volperm speaks "volperm.dev/exec/v1"`},
		{"sleep", "agent setup did not answer within 2s: killed it"},
		{"stray", "agent wrote outside the directories it was given: "},
		{"missing", `agent setup gave no result for volume "data"`},
		{"mountleft", "agent teardown left 1 mount(s) behind"},
		{"flood", "agent setup wrote more than 4194304 bytes to stdout"},
		{"daemon", "agent setup left 1 process(es) running (pid "},
		{"holdstdout", "agent setup left 1 process(es) running (pid "},
		{"chmodroot", "agent wrote outside the directories it was given: "},
		{"linkout", ""},
		{"procroot", "agent setup exited with status 1: open /proc/self/root/*: read-only file system"},
		{"mountout", ""},
		// The same agents in the long-lived mode (docs/exec-protocol.md "Long-lived mode").
		{"serve-good", ""},
		{"serve-exit3", "agent setup: the serving agent exited with status 3: driver exploded"},
		{"serve-badjson", `agent setup: invalid JSON on stdout`},
		{"serve-version", `agent setup: agent speaks protocol version "volperm.dev/exec/v0"; volperm speaks "volperm.dev/exec/v2"`},
		{"serve-sleep", "agent setup did not answer within 2s: killed it"},
		{"serve-stray", "agent wrote outside the directories it was given: "},
		{"serve-missing", `agent setup gave no result for volume "data"`},
		{"serve-mountleft", "agent teardown left 1 mount(s) behind"},
		{"serve-flood", "agent setup wrote more than 4194304 bytes on one line to stdout: killed it"},
		{"serve-daemon", "agent setup left 1 process(es) running (pid "},
		{"serve-chmodroot", "agent wrote outside the directories it was given: "},
		{"serve-linkout", ""},
		{"serve-procroot", "agent setup: the serving agent exited with status 1: open /proc/self/root/*: read-only file system"},
		{"serve-mountout", ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			if strings.HasSuffix(tt.mode, "procroot") || strings.HasSuffix(tt.mode, "mountout") {
				hostfeature.Need(t, hostfeature.MountSetattr) // the sandbox stops these
			}
			work := caseroottest.TempDir(t)
			// A canary outside the case root: no agent may change it.
			canary := filepath.Join(t.TempDir(), "canary")
			if err := os.WriteFile(canary, []byte("canary"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("VOLPERM_TEST_CANARY", canary)
			// A subtest that failed before the harness killed its agent's daemon kills it here:
			// the next subtests count only their own.
			t.Cleanup(func() {
				if t.Failed() {
					for _, pid := range sleepers(canary) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			tg, err := New(framework.TargetOptions{Arg: agentScript(t, tt.mode), WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			obs, err := tg.Observe(context.Background(), emptyDirCase())
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("verdict took %s: a misbehaving agent must not hang the harness", took)
			}
			wantMode := ModePerCall
			if strings.HasPrefix(tt.mode, "serve-") {
				wantMode = ModeServe
			}
			if got := tg.Info().Details["mode"]; !strings.HasPrefix(got, wantMode) {
				t.Errorf("agent driven in mode %q, want %s", got, wantMode)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(obs.Volumes) != 1 || obs.Volumes[0].SetUp != framework.SetUpOK || obs.Volumes[0].Paths[0].Mode != "0777" {
					t.Fatalf("unexpected observation: %s", obs.JSON())
				}
			} else if err == nil || !containsInOrder(err.Error(), strings.Split(tt.want, "*")) {
				t.Fatalf("verdict = %v, want it to contain %q", err, tt.want)
			}
			if err := tg.Close(); err != nil {
				t.Fatal(err)
			}
			// Nothing is left, whatever the agent did.
			if m, _ := mountinfo.AtOrBelow(work); len(m) > 0 {
				t.Errorf("mounts left: %q", m)
			}
			if left, _ := os.ReadDir(work); len(left) > 0 {
				t.Errorf("work dir not empty: %v", left)
			}
			if b, err := os.ReadFile(canary); err != nil || string(b) != "canary" {
				t.Errorf("the canary outside the case root changed: %q, %v", b, err)
			}
			if m, _ := mountinfo.AtOrBelow(filepath.Dir(canary)); len(m) > 0 {
				t.Errorf("a mount the agent made outside its work dir reached the host: %q", m)
				for _, p := range m {
					_ = syscall.Unmount(p, syscall.MNT_DETACH)
				}
			}
			if st, err := os.Stat(canary); err == nil && (st.Mode().Perm() != 0o600 || st.Sys().(*syscall.Stat_t).Nlink != 1) {
				t.Errorf("the canary's mode or links changed: %v, %d links", st.Mode(), st.Sys().(*syscall.Stat_t).Nlink)
			}
			// A process killed with SIGKILL leaves /proc a moment later on a loaded machine;
			// one the harness did not kill (sleep 300) is still there after 2 s.
			n := countSleepers(canary)
			for deadline := time.Now().Add(2 * time.Second); n > 0 && time.Now().Before(deadline); n = countSleepers(canary) {
				time.Sleep(50 * time.Millisecond)
			}
			if n > 0 {
				t.Errorf("%d process(es) the agent started are still running", n)
			}
		})
	}
}

// containsInOrder reports whether s contains parts, one after the other.
func containsInOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

func TestNewRejectsBadAgents(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"":                  "needs the agent's path",
		"/nonexistent/agnt": "give the path of an executable",
		dir:                 "is not an executable file",
		plain:               "is not an executable file",
	} {
		if _, err := New(framework.TargetOptions{Arg: arg}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) = %v, want %q", arg, err, want)
		}
	}
	t.Setenv("VOLPERM_AGENT_TIMEOUT", "soon")
	if _, err := New(framework.TargetOptions{Arg: agentScript(t, "good")}); err == nil || !strings.Contains(err.Error(), "VOLPERM_AGENT_TIMEOUT") {
		t.Errorf("a bad timeout must be refused, got %v", err)
	}
}

// The reference agent behind the protocol must observe exactly what the in-process reference
// node observes (issue: "it must pass exactly as the in-process reference does"). A sample of
// every tenth case of the catalogue, every area; the whole catalogue runs in CI through
// `volperm run --target exec:bin/volperm-agent`.
func TestReferenceAgentMatchesInProcessReference(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	for _, mode := range []string{ModePerCall, ModeServe} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(EnvAgentMode, mode)
			work := caseroottest.TempDir(t)
			ex, err := New(framework.TargetOptions{Arg: agentScript(t, "reference"), WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.New(framework.TargetOptions{WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			// Every 10th case and every fsGroup case; per call, every 30th (CI runs the whole
			// catalogue through the reference agent, served).
			sample := 10
			if mode == ModePerCall {
				sample = 30
			}
			areas := map[framework.Area]int{}
			n := 0
			start := time.Now()
			for i, c := range catalogue.All() {
				if i%sample != 0 && c.Area != framework.AreaFSGroup {
					continue
				}
				if ok, _ := ex.Supports(c); !ok {
					continue
				}
				want, err := ref.Observe(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: reference: %v", c.Name, err)
				}
				got, err := ex.Observe(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: exec: %v", c.Name, err)
				}
				if d := framework.Diff(want, got); len(d) > 0 {
					t.Errorf("%s: the agent differs from the in-process reference:\n  %s", c.Name, strings.Join(d, "\n  "))
				}
				areas[c.Area]++
				n++
			}
			// Measured, not asserted (docs/exec-protocol.md quotes a run of the catalogue).
			t.Logf("mode %s: %d cases on both targets in %s", ex.Info().Details["mode"], n, time.Since(start).Round(time.Millisecond))
			for _, a := range framework.Areas {
				if areas[a] == 0 {
					t.Errorf("no %s case compared", a)
				}
			}
			if got := ex.Info().Details["mode"]; got != mode {
				t.Errorf("agent driven in mode %q, want %s", got, mode)
			}
			if err := ex.Close(); err != nil {
				t.Fatal(err)
			}
			if m, _ := mountinfo.AtOrBelow(work); len(m) > 0 {
				t.Errorf("mounts left: %q", m)
			}
		})
	}
}

// countSleepers counts the "sleep 300" processes the daemon agents of the subtest whose canary
// is canary start.
func countSleepers(canary string) int { return len(sleepers(canary)) }

// sleepers lists the "sleep 300" processes the daemon agents of the subtest whose canary is
// canary start (they inherit the agent's environment, which names it).
func sleepers(canary string) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if b, err := os.ReadFile("/proc/" + p.Name() + "/cmdline"); err == nil && string(b) == "/bin/sleep\x00300\x00" {
			env, _ := os.ReadFile("/proc/" + p.Name() + "/environ")
			env = append([]byte{0}, env...)
			if pid, err := strconv.Atoi(p.Name()); err == nil && bytes.Contains(env, []byte("\x00VOLPERM_TEST_CANARY="+canary+"\x00")) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// The reference agent as the apiserver too (the admit call of protocol v2): the pairs
// exec+reference and exec+exec observe exactly what the in-process reference observes, on every
// area (admission-only cases with validation errors, field dropping and the allowlist included).
func TestAgentAsAPIServer(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	work := caseroottest.TempDir(t)
	agentPath := agentScript(t, "reference")
	ref, err := reference.New(framework.TargetOptions{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, pair string }{
		{ModeServe, "exec:" + agentPath + "+reference"},
		{ModeServe, "exec:" + agentPath + "+exec:" + agentPath},
		{ModePerCall, "exec:" + agentPath + "+exec:" + agentPath},
	} {
		name := fmt.Sprintf("%s/%d-agents", tc.mode, strings.Count(tc.pair, "exec:"))
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvAgentMode, tc.mode)
			pair, err := framework.NewTarget(tc.pair, framework.TargetOptions{WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			sample := 15
			if tc.mode == ModePerCall {
				sample = 60
			}
			areas := map[framework.Area]int{}
			for i, c := range catalogue.All() {
				if i%sample != 0 && areas[c.Area] > 0 || c.Releases.Skewed() { // an agent is the newest release
					continue
				}
				if ok, _ := pair.Supports(c); !ok { // a kubeletRelease step: an agent is one release
					continue
				}
				want, err := ref.Observe(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: reference: %v", c.Name, err)
				}
				got, err := pair.Observe(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: %s: %v", c.Name, tc.pair, err)
				}
				want.Source = got.Source
				if d := framework.Diff(want, got); len(d) > 0 {
					t.Errorf("%s: the agent pair differs from the in-process reference:\n  %s", c.Name, strings.Join(d, "\n  "))
				}
				areas[c.Area]++
			}
			for _, a := range framework.Areas {
				if areas[a] == 0 {
					t.Errorf("no %s case compared", a)
				}
			}
			if err := pair.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := countServers(); n > 0 {
		t.Errorf("%d serving agents still run after Close", n)
	}
}

// countServers counts the reference test agents still serving.
func countServers() int {
	n := 0
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		env, err1 := os.ReadFile("/proc/" + p.Name() + "/environ")
		cmd, err2 := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if err1 == nil && err2 == nil && bytes.Contains(env, []byte("VOLPERM_TEST_AGENT=reference\x00")) && bytes.HasSuffix(cmd, []byte("\x00serve\x00")) {
			n++
		}
	}
	return n
}

// The halves of the target exec (framework/targets/exec registers them in volperm) for the pairs
// of these tests.
func init() {
	framework.RegisterHalves(Name,
		func(opts framework.TargetOptions) (framework.APIServer, error) { return NewAPIServer(opts) },
		func(opts framework.TargetOptions) (framework.Node, error) { return NewNode(opts) })
}

// New is the target exec:PATH (framework/targets/exec: the reference apiserver with the agent as
// the kubelet) for these tests.
func New(opts framework.TargetOptions) (framework.Target, error) {
	node, err := NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewPair(Name, refnode.APIServer{}, node), nil
}

// A pod with hostUsers: false runs through an agent whose hello lists the feature userNamespaces
// (per call and served): the harness mounts each volume idmapped with the range the agent's
// setup answered, and leaves nothing behind; an agent that lists no such feature does not run
// it (not run, not failed); a range that is missing, not a kubelet's, or moves on a restart is
// a verdict.
func TestUserNamespaceThroughExec(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	c := emptyDirCase()
	c.Name = "exec: emptyDir in a user namespace"
	c.Pod.Spec.HostUsers = new(bool)
	c.After = []framework.Step{{RestartKubelet: true}}
	const kept = "65536 ids, aligned, kept across restarts true"
	tests := []struct {
		mode string
		want string // "" = the case is observed; "not run: ..." = Supports refuses it
		ns   string // the observed userNamespace (docs/observation.md "User namespace")
	}{
		{"good", "not run: hostUsers: false: the agent does not say it runs a pod in a user namespace of its own (docs/exec-protocol.md \"User namespaces\"): it does not answer `AGENT hello`: agent hello exited with status 2: unknown operation hello", ""},
		{"serve-good", `not run: hostUsers: false: the agent does not say it runs a pod in a user namespace of its own (docs/exec-protocol.md "User namespaces"): its hello lists no feature "userNamespaces" (it lists [])`, ""},
		{"userns", "", kept},
		{"serve-userns", "", kept},
		{"userns-none", `agent setup (attempt 1) gave no userNamespace for a pod with hostUsers: false, though its hello lists "userNamespaces"`, ""},
		{"userns-zero", "", "65536 ids, not aligned, kept across restarts true"},
		{"userns-moves", "", "65536 ids, aligned, kept across restarts false"},
		{"userns-stray", "agent wrote outside the directories it was given: ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			work := caseroottest.TempDir(t)
			tg, err := New(framework.TargetOptions{Arg: agentScript(t, tt.mode), WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := tg.Close(); err != nil {
					t.Error(err)
				}
				if m, _ := mountinfo.AtOrBelow(work); len(m) > 0 {
					t.Errorf("mounts left: %q", m)
				}
			}()
			ok, why := tg.Supports(c)
			if want, notRun := strings.CutPrefix(tt.want, "not run: "); notRun {
				if ok || why != want {
					t.Errorf("Supports = %v, %q; want false, %q", ok, why, want)
				}
				return
			}
			if !ok {
				t.Fatalf("not run: %s", why)
			}
			obs, err := tg.Observe(context.Background(), c)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("verdict = %v, want it to contain %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The root is 0:0 on disk and in the pod (no podUID); far is 70000 on disk, which the
			// pod sees as the overflow id through the idmapped mount.
			if got := obs.UserNamespace.String(); got != tt.ns {
				t.Errorf("userNamespace = %s, want %s", got, tt.ns)
			}
			p := obs.Volumes[0].Paths
			if len(p) != 2 || p[0].PodUID != nil || p[1].Path != "far" || p[1].UID != 70000 || p[1].PodUID == nil || *p[1].PodUID != framework.Overflow || *p[1].PodGID != framework.Overflow {
				t.Fatalf("unexpected observation: %s", obs.JSON())
			}
		})
	}
}

// TestProtocolFeaturesAreClaims (issue 51): every optional part of the protocol that keeps an
// agent from a case is a claim of the same name, and the claim's cases are exactly those an
// agent needs it for (admitted by the reference apiserver, as the exec target admits): so an
// agent whose hello lacks a feature leaves no required case unrun once the claim is dropped,
// and a claim requires no case the agent could run without the feature.
func TestProtocolFeaturesAreClaims(t *testing.T) {
	for _, f := range protocolFeatures {
		if !slices.Contains(framework.FeatureNames(), f.name) {
			t.Errorf("the protocol feature %s is no claim (framework.Features)", f.name)
		}
	}
	needing := map[string]int{}
	for _, c := range catalogue.All() {
		a, err := refnode.APIServer{}.Admit(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var needs []string
		if a.ReachesNode(c) {
			needs = needsFeatures(c, a)
		}
		claims := framework.CaseFeatures(c)
		for _, f := range protocolFeatures {
			switch need, claim := slices.Contains(needs, f.name), slices.Contains(claims, f.name); {
			case need && !claim:
				t.Errorf("%s: an agent needs the feature %s, but the case is not of the claim %s", c.Name, f.name, f.name)
			case claim && !need && f.name != execproto.FeatureVolumeBindMountOptions:
				// A case of volumeBindMountOptions may be the gate without the field
				// (framework.Features: the gate on in either component).
				t.Errorf("%s: of the claim %s, but an agent runs it without the feature", c.Name, f.name)
			case need:
				needing[f.name]++
			}
		}
	}
	t.Logf("cases per protocol feature: %v", needing)
}
