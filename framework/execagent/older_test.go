package execagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/framework/targets/exec/agent"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// The agents of the older protocol versions docs/exec-protocol.md describes, as the test binary
// plays them (VOLPERM_TEST_AGENT=v1 or v2): the reference node's answers, read and written with
// only what that version had. They decode every request strictly with the types of their
// version, answer only their version's fields, and write to VOLPERM_TEST_SAW, per request, what
// of it their version does not have (v1Beyond).
//
//   - v1 (8273c1e, docs/exec-protocol.md "Calls"): a process per call, setup and teardown; it
//     knows no other operation (serve, hello, admit: "unknown operation", status 2).
//   - v2 (6d649e7 and 7fd665e, "Long-lived mode", "admit"): it serves, its hello lists no
//     features, and it admits; driven a process per call it is v1.

// v1Request is a setup or teardown request of protocol v1 (a7a5182 framework/execproto).
type v1Request struct {
	ProtocolVersion     string                       `json:"protocolVersion"`
	Attempt             int                          `json:"attempt"`
	Pod                 *corev1.Pod                  `json:"pod"`
	PreservePermissions []string                     `json:"preservePermissions,omitempty"`
	KubeletGates        map[string]bool              `json:"kubeletGates"`
	Volumes             []execproto.Volume           `json:"volumes"`
	HostRoot            string                       `json:"hostRoot"`
	StateDir            string                       `json:"stateDir"`
	Sources             map[string]map[string]string `json:"sources,omitempty"`
}

// v1SetUpResponse and v1VolumeResult are a setup answer of protocol v1.
type v1SetUpResponse struct {
	ProtocolVersion string           `json:"protocolVersion"`
	Volumes         []v1VolumeResult `json:"volumes"`
}

type v1VolumeResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// v2Message and v2AdmitRequest are a message and an admit request of protocol v2 (7fd665e).
type v2Message struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Op              string          `json:"op"`
	Request         json.RawMessage `json:"request,omitempty"`
	Admit           json.RawMessage `json:"admit,omitempty"`
}

type v2AdmitRequest struct {
	ProtocolVersion        string                      `json:"protocolVersion"`
	Pod                    *corev1.Pod                 `json:"pod,omitempty"`
	OldPod                 *corev1.Pod                 `json:"oldPod,omitempty"`
	PersistentVolume       *corev1.PersistentVolume    `json:"persistentVolume,omitempty"`
	PreservePermissions    []string                    `json:"preservePermissions,omitempty"`
	OldPreservePermissions []string                    `json:"oldPreservePermissions,omitempty"`
	APIServerGates         map[string]bool             `json:"apiserverGates"`
	FlexVolumePolicy       *execproto.FlexVolumePolicy `json:"flexVolumePolicy,omitempty"`
}

// v2AdmitResponse is an admit answer of protocol v2 (7fd665e: no warnings).
type v2AdmitResponse struct {
	ProtocolVersion     string      `json:"protocolVersion"`
	Allowed             bool        `json:"allowed"`
	Errors              []string    `json:"errors,omitempty"`
	Dropped             []string    `json:"dropped,omitempty"`
	PreservePermissions []string    `json:"preservePermissions,omitempty"`
	Pod                 *corev1.Pod `json:"pod,omitempty"`
}

// v1VolumeTypes are the volume types protocol v1 set up (8273c1e docs/exec-protocol.md
// "Request": a directory for every volume but hostPath ones; the reference node of then).
var v1VolumeTypes = []string{"emptyDir", "hostPath", "secret", "configMap", "downwardAPI", "projected", "flexVolume"}

// strictly decodes b into v, refusing a field v's type lacks.
func strictly(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// v1Beyond lists what of a setup or teardown request protocol v1 does not have: a field its
// Request lacks, a volume type it did not set up, a volume but a hostPath one without a
// directory, a pod field that only an agent of a feature is sent (docs/exec-protocol.md
// "Features"). Empty for a request of v1.
func v1Beyond(raw []byte) []string {
	var req v1Request
	if err := strictly(raw, &req); err != nil {
		return []string{"not a v1 request: " + err.Error()}
	}
	if req.Pod == nil {
		return []string{"no pod"}
	}
	var out []string
	dirs := map[string]bool{}
	for _, v := range req.Volumes {
		dirs[v.Name] = true
	}
	for _, v := range req.Pod.Spec.Volumes {
		if t := framework.VolumeType(v); !slices.Contains(v1VolumeTypes, t) {
			out = append(out, fmt.Sprintf("volume %q of type %s", v.Name, t))
		} else if v.HostPath == nil && !dirs[v.Name] {
			out = append(out, fmt.Sprintf("volume %q without a directory", v.Name))
		}
	}
	spec := req.Pod.Spec
	if framework.InUserNamespace(req.Pod) {
		out = append(out, "hostUsers: false")
	}
	if spec.SecurityContext != nil && spec.SecurityContext.SupplementalGroupsPolicy != nil {
		out = append(out, "supplementalGroupsPolicy")
	}
	if framework.UsesBindMountOptions(req.Pod) {
		out = append(out, "bindMountOptions")
	}
	return out
}

// sawLine is what an older agent writes to VOLPERM_TEST_SAW per request.
type sawLine struct {
	Op     string   `json:"op"`
	Pod    string   `json:"pod"`
	Beyond []string `json:"beyond,omitempty"`
}

// saw appends a request's line to VOLPERM_TEST_SAW (the agent's one writable file outside its
// work dir: VOLPERM_AGENT_WRITABLE).
func saw(op, pod string, beyond []string) {
	b, _ := json.Marshal(sawLine{Op: op, Pod: pod, Beyond: beyond})
	f, err := os.OpenFile(os.Getenv("VOLPERM_TEST_SAW"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "saw:", err)
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

// olderAgent answers one call (or serves, v2) as the agent of protocol version ("v1", "v2").
func olderAgent(version, op string) int {
	if version == "v2" && op == execproto.OpServe {
		return serveOlder(os.Stdin, os.Stdout)
	}
	if op != execproto.OpSetUp && op != execproto.OpTearDown {
		fmt.Fprintln(os.Stderr, "unknown operation", op)
		return 2
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out, err := answerOlder(op, in, execproto.Version)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, _ = os.Stdout.Write(append(out, '\n'))
	return 0
}

// serveOlder is the long-lived mode of protocol v2: hello without features, setup, teardown and
// admit, each message decoded strictly as v2 wrote it.
func serveOlder(stdin io.Reader, stdout io.Writer) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m v2Message
		if err := strictly(sc.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "bad message:", err)
			return 2
		}
		var out []byte
		var err error
		switch m.Op {
		case execproto.OpHello:
			out, err = json.Marshal(map[string]string{"protocolVersion": execproto.VersionServe, "op": execproto.OpHello})
		case execproto.OpAdmit:
			out, err = admitOlder(m.Admit)
		case execproto.OpSetUp, execproto.OpTearDown:
			out, err = answerOlder(m.Op, m.Request, execproto.VersionServe)
		default:
			err = fmt.Errorf("unknown operation %s", m.Op)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		_, _ = stdout.Write(append(out, '\n'))
	}
	return 0
}

// answerOlder is the reference node's answer to a v1 request, with only v1's fields.
func answerOlder(op string, raw []byte, version string) ([]byte, error) {
	var req v1Request
	beyond := v1Beyond(raw)
	if err := strictly(raw, &req); err != nil {
		_ = json.Unmarshal(raw, &req) // for the pod's name
		name := ""
		if req.Pod != nil {
			name = req.Pod.Name
		}
		saw(op, name, beyond)
		return nil, fmt.Errorf("read request: %w", err)
	}
	saw(op, req.Pod.Name, beyond)
	answer, err := agent.Answer(op, &execproto.Request{ProtocolVersion: req.ProtocolVersion, Attempt: req.Attempt, Pod: req.Pod,
		PreservePermissions: req.PreservePermissions, KubeletGates: req.KubeletGates, Volumes: req.Volumes,
		HostRoot: req.HostRoot, StateDir: req.StateDir, Sources: req.Sources}, version)
	if err != nil {
		return nil, err
	}
	if su, ok := answer.(execproto.SetUpResponse); ok {
		v1 := v1SetUpResponse{ProtocolVersion: su.ProtocolVersion, Volumes: []v1VolumeResult{}}
		for _, r := range su.Volumes {
			v1.Volumes = append(v1.Volumes, v1VolumeResult{Name: r.Name, OK: r.OK, Error: r.Error})
		}
		return json.Marshal(v1)
	}
	return json.Marshal(answer) // a TearDownResponse: as in v1
}

// admitOlder is the reference apiserver's answer to a v2 admit request, with only v2's fields.
func admitOlder(raw []byte) ([]byte, error) {
	var req v2AdmitRequest
	if err := strictly(raw, &req); err != nil {
		saw(execproto.OpAdmit, "", []string{"not a v2 admit request: " + err.Error()})
		return nil, fmt.Errorf("read admit request: %w", err)
	}
	name := ""
	if req.Pod != nil {
		name = req.Pod.Name
	}
	saw(execproto.OpAdmit, name, nil)
	resp, err := agent.Admit(&execproto.AdmitRequest{ProtocolVersion: req.ProtocolVersion, Pod: req.Pod, OldPod: req.OldPod,
		PersistentVolume: req.PersistentVolume, PreservePermissions: req.PreservePermissions,
		OldPreservePermissions: req.OldPreservePermissions, APIServerGates: req.APIServerGates,
		FlexVolumePolicy: req.FlexVolumePolicy}, execproto.VersionServe)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v2AdmitResponse{ProtocolVersion: resp.ProtocolVersion, Allowed: resp.Allowed, Errors: resp.Errors,
		Dropped: resp.Dropped, PreservePermissions: resp.PreservePermissions, Pod: resp.Pod})
}

// featureReason finds the feature section of docs/exec-protocol.md a "not run" reason names
// (execagent SupportsNode), "" for a reason that is no missing hello feature.
var featureReason = regexp.MustCompile(`the agent does not say [^(]*\(docs/exec-protocol\.md "([^"]+)"\)`)

// carriesFeature says whether c, admitted as a, has what only an agent of a feature is sent or
// asked (docs/exec-protocol.md "Features"), independently of execagent's gates.
func carriesFeature(c *framework.Case, a framework.Admitted) bool {
	if c.SELinux != nil || framework.HasContainerProbes(c) {
		return true
	}
	if a.Pod == nil {
		return false
	}
	if framework.InUserNamespace(a.Pod) || framework.UsesBindMountOptions(a.Pod) {
		return true
	}
	if sc := a.Pod.Spec.SecurityContext; sc != nil && sc.SupplementalGroupsPolicy != nil {
		return true
	}
	return slices.ContainsFunc(a.Pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Image != nil })
}

// TestOlderProtocolAgents (issue 51: "a protocol that never moves silently"): the agent of each
// older protocol version docs/exec-protocol.md describes (v1: a process per call, no hello; v2:
// served, a hello without features, and the apiserver too) runs the catalogue as before: every
// case the reference agent runs, it runs and observes exactly as the in-process reference does
// (so the same verdict), or does not run because the case needs a hello feature it does not
// list, and only a case that carries one; and no request it was sent holds anything its
// version does not have (v1Beyond, strict decoding). Every case is asked; observed are every
// sample-th and every case of an area newer than v1 (userns, mounts, selinux).
func TestOlderProtocolAgents(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	work := caseroottest.TempDir(t)
	ref, err := reference.New(framework.TargetOptions{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	newer := []framework.Area{framework.AreaUserNS, framework.AreaMounts, framework.AreaSELinux}
	refAgent := agentScript(t, "reference")
	for _, tc := range []struct {
		version string
		// pair makes a target of agent: the older one, and the reference agent (every feature)
		// in the same shape.
		pair   func(agent string) string
		sample int
	}{
		{"v1", func(a string) string { return "exec:" + a }, 40},
		{"v2", func(a string) string { return "exec:" + a + "+exec:" + a }, 10},
	} {
		t.Run(tc.version, func(t *testing.T) {
			sawFile := filepath.Join(t.TempDir(), "saw")
			if err := os.WriteFile(sawFile, nil, 0o666); err != nil {
				t.Fatal(err)
			}
			t.Setenv("VOLPERM_TEST_SAW", sawFile)
			t.Setenv(EnvWritable, sawFile)
			target := func(agent string) framework.Target {
				var tg framework.Target
				var err error
				if strings.Contains(tc.pair(agent), "+") {
					tg, err = framework.NewTarget(tc.pair(agent), framework.TargetOptions{WorkDir: work})
				} else {
					tg, err = New(framework.TargetOptions{Arg: agent, WorkDir: work})
				}
				if err != nil {
					t.Fatal(err)
				}
				return tg
			}
			full, old := target(refAgent), target(agentScript(t, tc.version))
			var cases, bothNotRun, ran, observed int
			notRun := map[string]int{}
			start := time.Now()
			for i, c := range catalogue.All() {
				cases++
				okFull, whyFull := full.Supports(c)
				okOld, whyOld := old.Supports(c)
				switch {
				case !okFull:
					if okOld {
						t.Errorf("%s: the %s agent runs it, the reference agent does not (%s)", c.Name, tc.version, whyFull)
					}
					bothNotRun++
					continue
				case !okOld:
					m := featureReason.FindStringSubmatch(whyOld)
					if m == nil {
						t.Errorf("%s: not run on the %s agent for a reason that is no hello feature: %s", c.Name, tc.version, whyOld)
						continue
					}
					cc := c.DeepCopy()
					cc.Complete()
					if a, _ := (refnode.APIServer{}).Admit(context.Background(), cc); !carriesFeature(cc, a) {
						t.Errorf("%s: not run on the %s agent though it carries nothing of a feature: %s", c.Name, tc.version, whyOld)
					}
					notRun[m[1]]++
					continue
				}
				ran++
				if i%tc.sample != 0 && !slices.Contains(newer, c.Area) {
					continue
				}
				want, err := ref.Observe(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: reference: %v", c.Name, err)
				}
				got, err := old.Observe(context.Background(), c)
				if err != nil {
					t.Errorf("%s: the %s agent: %v", c.Name, tc.version, err)
					continue
				}
				want.Source = got.Source
				if d := framework.Diff(want, got); len(d) > 0 {
					t.Errorf("%s: the %s agent differs from the in-process reference:\n  %s", c.Name, tc.version, strings.Join(d, "\n  "))
				}
				observed++
			}
			for _, tg := range []framework.Target{full, old} {
				if err := tg.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if m, _ := mountinfo.AtOrBelow(work); len(m) > 0 {
				t.Errorf("mounts left: %q", m)
			}
			// What the agent was sent: nothing its version does not have.
			b, err := os.ReadFile(sawFile)
			if err != nil {
				t.Fatal(err)
			}
			ops := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var s sawLine
				if err := json.Unmarshal([]byte(l), &s); err != nil {
					t.Fatalf("%s: %q: %v", sawFile, l, err)
				}
				ops[s.Op]++
				if len(s.Beyond) > 0 {
					t.Errorf("the %s agent was sent, for pod %q (%s), what %s does not have: %s", tc.version, s.Pod, s.Op, tc.version, strings.Join(s.Beyond, "; "))
				}
			}
			if ops[execproto.OpSetUp] == 0 || (tc.version == "v2") != (ops[execproto.OpAdmit] > 0) {
				t.Errorf("the %s agent answered %v: want setups, and admits exactly when it is the apiserver", tc.version, ops)
			}
			// Each reason names a section of the docs that says what the feature is.
			doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "exec-protocol.md"))
			if err != nil {
				t.Fatal(err)
			}
			var sections []string
			for s, n := range notRun {
				if !regexp.MustCompile("(?m)^## " + regexp.QuoteMeta(s) + " \\(feature `[a-zA-Z]+`\\)$").Match(doc) {
					t.Errorf("a reason names docs/exec-protocol.md %q, which has no section \"## %s (feature `NAME`)\"", s, s)
				}
				sections = append(sections, fmt.Sprintf("%s %d", s, n))
			}
			sort.Strings(sections)
			t.Logf("protocol %s (mode %s): %d cases; %d not run on the reference agent either; %d not run for a feature (%s); %d run, %d of them observed the same as the in-process reference; requests %v; %s",
				tc.version, old.Info().Details["mode"], cases, bothNotRun, sum(notRun), strings.Join(sections, ", "), ran, observed, ops, time.Since(start).Round(time.Second))
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
