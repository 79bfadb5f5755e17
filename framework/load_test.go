package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// caseYAML is a valid Case document; tests splice one line in at the marker to break it.
const caseYAML = `apiVersion: volperm.dev/v1
kind: Case
name: sticky tmp
area: emptydir
profile: alpha
gates:
  apiserver: {EmptyDirVolumeMode: true}
  kubelet: {EmptyDirVolumeMode: true}
pod:
  spec:
    securityContext: {fsGroup: 2000}
    volumes:
    - name: tmp
      emptyDir: {mode: 01777}
    - name: host
      hostPath: {path: /var/run/volperm/x, type: Socket}
    - name: data
      flexVolume: {driver: volperm/fixture}
host:
- {path: /var/run/volperm/t, kind: socket}
- {path: /var/run/volperm/x, kind: symlink, target: /var/run/volperm/t}
storage:
  data:
  - {path: sub, dir: true, mode: 0700}
  - {path: sub/f, mode: 0410}
after:
- chmod: {volume: data, path: sub/f, mode: 0410}
- restartKubelet: true
probes:
- {name: create, volume: tmp, as: {uid: 1001, gid: 1001}, op: create, path: f}
- {name: rename, volume: tmp, as: {uid: 1002, gid: 1002}, op: rename, path: f, to: g}
#EXTRA
`

func withExtra(extra string) string { return strings.Replace(caseYAML, "#EXTRA", extra, 1) }

func TestLoadCasesErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // the whole error must be this one line
	}{
		{"malformed YAML", "name: [unclosed\n", "x.yaml: document 1 (line 1): invalid YAML:"},
		{"malformed YAML in a later document names the file line", caseYAML + "---\n# two\nname: x\n  bad: indent\n", "x.yaml: document 2 (line 34): invalid YAML: line 36:"},
		{"duplicate key", withExtra("name: again"), `x.yaml: document 1 (line 1): invalid YAML: unmarshal errors: line 32: key "name" already set in map; fix the syntax`},
		{"unknown top-level field", withExtra("pood: {}"), `x.yaml: document 1 (line 1): unknown field "pood"; a Case has: apiVersion, kind, name, area, profile, description`},
		{"unknown field in the pod", strings.Replace(caseYAML, "{mode: 01777}", "{mod: 01777}", 1), `x.yaml: document 1 (line 1): pod.spec.volumes[0].emptyDir: unknown field "mod"; an EmptyDirVolumeSource has: medium, sizeLimit, mode`},
		{"field name in the wrong case", strings.Replace(caseYAML, "name: sticky tmp", "Name: sticky tmp", 1), `unknown field "Name" (did you mean "name"?)`},
		{"a step written into the probes list", withExtra("- chmod: {volume: data, path: f, mod: 0600}"), `probes[2]: unknown field "chmod"; a Probe has: name, volume, as, op, path, to`},
		{"type error", strings.Replace(caseYAML, "kind: socket}", "kind: socket, mode: -1}", 1), `x.yaml: document 1 (line 1): host.mode: cannot use number -1 as uint32; fix the value`},
		{"not a case", "apiVersion: apps/v1\nkind: Deployment\n", `x.yaml: document 1 (line 1): apiVersion "apps/v1" kind "Deployment": not a case; write apiVersion: volperm.dev/v1, kind: Case or apiVersion: v1, kind: Pod`},
		{"a list, not a mapping", "- a\n- b\n", "a document must be a mapping with apiVersion and kind, not a list"},
		{"no documents", "# only a comment\n---\n", "x.yaml: no documents: write a Case"},
		{"unknown area", strings.Replace(caseYAML, "area: emptydir", "area: emptyDir", 1), `x.yaml: case "sticky tmp": area: unknown "emptyDir"; use one of emptydir, hostpath, fsgroup, atomicwriter, flexvolume, skew`},
		{"unknown profile", strings.Replace(caseYAML, "profile: alpha", "profile: beta", 1), `x.yaml: case "sticky tmp": profile: unknown "beta"; use one of conformance, alpha, proposal`},
		{"unknown gate", strings.Replace(caseYAML, "kubelet: {EmptyDirVolumeMode: true}", "kubelet: {EmptyDirMode: true}", 1), `x.yaml: case "sticky tmp": gates.kubelet["EmptyDirMode"]: unknown gate; volperm knows AtomicWriteVolumeUserFields, EmptyDirVolumeMode, PreservePermissions, VolumeBindMountOptions`},
		{"out-of-range host mode", strings.Replace(caseYAML, "target: /var/run/volperm/t}", "target: /var/run/volperm/t, mode: 020000}", 1), `x.yaml: case "sticky tmp": host[1].mode: 0o20000 is out of range 0..07777`},
		{"out-of-range storage mode", strings.Replace(caseYAML, "mode: 0410}\nafter", "mode: 010410}\nafter", 1), `x.yaml: case "sticky tmp": storage["data"][1].mode: 0o10410 is out of range 0..07777`},
		{"out-of-range chmod mode", strings.Replace(caseYAML, "path: sub/f, mode: 0410}\n- restart", "path: sub/f, mode: 017777}\n- restart", 1), `x.yaml: case "sticky tmp": after[0].chmod.mode: 0o17777 is out of range 0..07777`},
		{"unknown probe op", strings.Replace(caseYAML, "op: create", "op: unlink", 1), `x.yaml: case "sticky tmp": probes[0].op: unknown "unlink"; use one of create, write, read, delete, rename, list, mkdir`},
		{"probe on a missing volume", strings.Replace(caseYAML, "volume: tmp, as: {uid: 1002", "volume: scratch, as: {uid: 1002", 1), `x.yaml: case "sticky tmp": probes[1].volume: no volume "scratch" in the pod; name one of [data, host, tmp]`},
		{"chmod on a missing volume", strings.Replace(caseYAML, "chmod: {volume: data", "chmod: {volume: nope", 1), `after[0].chmod.volume: no volume "nope" in the pod`},
		{"a symlink as the storage's root", strings.Replace(caseYAML, "- {path: sub, dir: true, mode: 0700}", "- {path: ., symlink: x, mode: 0700}", 1), `storage["data"][0]: the storage's root (".") cannot be a symlink`},
		{"storage outside the volume", strings.Replace(caseYAML, "- {path: sub, dir: true, mode: 0700}", "- {path: ../x, mode: 0700}", 1), `storage["data"][0].path: "../x" must be "." (the storage's root) or a clean path below it`},
		{"storage of a volume that is not a flexVolume", strings.Replace(caseYAML, "storage:\n  data:", "storage:\n  tmp:", 1), `storage["tmp"]: volume "tmp" is emptyDir; only flexVolume volumes can be named here`},
		{"preservePermissions on an emptyDir", withExtra("preservePermissions: [tmp]"), `preservePermissions[0]: volume "tmp" is emptyDir; only secret, configMap, downwardAPI, projected volumes can be named here (in pod)`},
		{"relative host path", strings.Replace(caseYAML, "{path: /var/run/volperm/t,", "{path: var/run/volperm/t,", 1), `host[0].path: "var/run/volperm/t" must be absolute and clean`},
		{"host path with ..", strings.Replace(caseYAML, "{path: /var/run/volperm/t,", "{path: /var/run/../t,", 1), `host[0].path: "/var/run/../t" must be absolute and clean`},
		{"symlink without target", strings.Replace(caseYAML, ", target: /var/run/volperm/t}", "}", 1), `host[1].target: a symlink needs an absolute, clean target, got ""`},
		{"target on a socket", strings.Replace(caseYAML, "kind: socket}", "kind: socket, target: /a}", 1), `host[0].target: only a symlink has a target`},
		{"step with two fields", strings.Replace(caseYAML, "- restartKubelet: true", "- {restartKubelet: true, setGates: {kubelet: {EmptyDirVolumeMode: false}}}", 1), `after[1]: set exactly one of chmod, setGates, restartKubelet, updateSources, kubeletRelease (found 2)`},
		{"empty step", strings.Replace(caseYAML, "- restartKubelet: true", "- {}", 1), `after[1]: set exactly one of chmod, setGates, restartKubelet, updateSources, kubeletRelease (found 0)`},
		{"duplicate probe name", strings.Replace(caseYAML, "name: rename", "name: create", 1), `probes[1].name: "create" is already used by probes[0]`},
		{"rename without target", strings.Replace(caseYAML, ", to: g}", "}", 1), `probes[1].to: rename needs a clean path below the volume root`},
		{"chmod without a mode", withExtra("- {name: m, volume: tmp, as: {uid: 1, gid: 1}, op: chmod, path: f}"), `probes[2].mode: chmod needs a mode 0..07777 (0640 in YAML, 416 in JSON)`},
		{"chmod past 07777", withExtra("- {name: m, volume: tmp, as: {uid: 1, gid: 1}, op: chmod, path: f, mode: 010000}"), `probes[2].mode: chmod needs a mode 0..07777`},
		{"a mode on create", withExtra("- {name: m, volume: tmp, as: {uid: 1, gid: 1}, op: create, path: g, mode: 0600}"), `probes[2].mode: only op chmod sets a mode; remove it`},
		{"chown without an owner", withExtra("- {name: o, volume: tmp, as: {uid: 1, gid: 1}, op: chown, path: f}"), `probes[2].owner: chown needs owner {uid, gid}, both >= 0`},
		{"an owner on read", withExtra("- {name: o, volume: tmp, as: {uid: 1, gid: 1}, op: read, path: f, owner: {uid: 1, gid: 1}}"), `probes[2].owner: only op chown sets an owner; remove it`},
		{"unknown runtime feature", withExtra("runtimeLacks: [seccomp]"), `runtimeLacks[0]: unknown "seccomp"; use one of userNamespaces`},
		{"probes on a pod whose sandbox fails", strings.Replace(withExtra("runtimeLacks: [userNamespaces]"), "pod:\n  spec:\n", "pod:\n  spec:\n    hostUsers: false\n", 1), `runtimeLacks: the pod's sandbox cannot be created`},
		{"no pod", "apiVersion: volperm.dev/v1\nkind: Case\nname: x\narea: skew\nprofile: alpha\n", `x.yaml: case "x": pod: Required value: a case admits a pod or a persistentVolume`},
		{"no name", "apiVersion: volperm.dev/v1\nkind: Case\narea: skew\nprofile: alpha\n", `x.yaml: name: Required value`},
		{"duplicate case names", caseYAML + "---\n" + caseYAML, `x.yaml: document 2 (line 34): case "sticky tmp": name: already used by document 1; names must be unique`},
		{"pod manifest without a name", "apiVersion: v1\nkind: Pod\nspec: {volumes: [{name: a, emptyDir: {}}]}\n", "x.yaml: document 1 (line 1): metadata.name: Required value"},
		{"pod manifest without volumes", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n", `spec.volumes: pod "p" has no emptyDir`},
		{"pod manifest with an unknown field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volume: []}\n", `x.yaml: document 1 (line 1): spec: unknown field "volume"; a PodSpec has: volumes,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := LoadCases("x.yaml", []byte(tt.data), Gates{})
			if err == nil {
				t.Fatalf("want error containing %q, got %d cases", tt.want, len(cases))
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", msg, tt.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error must be one line: %q", msg)
			}
			if !strings.HasPrefix(msg, "x.yaml: ") {
				t.Errorf("error must start with the file name: %q", msg)
			}
		})
	}
}

func TestLoadCasesCase(t *testing.T) {
	cases, err := LoadCases("x.yaml", []byte(caseYAML), Gates{Kubelet: map[string]bool{GatePreservePermissions: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 {
		t.Fatalf("want 1 case, got %d", len(cases))
	}
	c := cases[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", c.Name, "sticky tmp"},
		{"emptyDir mode: YAML 1.1 octal", *c.Pod.Spec.Volumes[0].EmptyDir.Mode, int32(01777)},
		{"storage mode: YAML 1.1 octal", c.Storage["data"][1].Mode, uint32(0410)},
		{"Case documents keep their own gates", c.Gates.Kubelet[GatePreservePermissions], false},
		{"apiserver gate", c.Gates.APIServer[GateEmptyDirVolumeMode], true},
		{"symlink target", c.Host[1].Target, "/var/run/volperm/t"},
		{"steps", len(c.After), 2},
		{"rename target", c.Probes[1].To, "g"},
		{"Complete: namespace", c.Pod.Namespace, Namespace},
		{"Complete: default container mounts every volume", len(c.Pod.Spec.Containers[0].VolumeMounts), 3},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: got %v, want %v", ck.what, ck.got, ck.want)
		}
	}
}

// A Pod manifest becomes a case; modes inside the pod spec are API data, judged by the apiserver.
func TestLoadCasesPodManifests(t *testing.T) {
	defaults := Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: true}, Kubelet: map[string]bool{GateEmptyDirVolumeMode: true}}
	tests := []struct {
		name     string
		data     string
		wantName string
		area     Area
		profile  Profile
	}{
		{"emptyDir with an out-of-range mode is alpha and loads", "apiVersion: v1\nkind: Pod\nmetadata: {name: too-big}\nspec:\n  volumes:\n  - {name: a, emptyDir: {mode: 1024}}\n", "too-big", AreaEmptyDir, ProfileAlpha},
		{"emptyDir without mode is conformance", "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  volumes:\n  - {name: a, emptyDir: {medium: Memory}}\n", "plain", AreaEmptyDir, ProfileConformance},
		{"hostPath", "apiVersion: v1\nkind: Pod\nmetadata: {name: docker}\nspec:\n  volumes:\n  - {name: s, hostPath: {path: /var/run/docker.sock, type: Socket}}\n", "docker", AreaHostPath, ProfileConformance},
		{"secret with defaultMode 0o1000 loads", "apiVersion: v1\nkind: Pod\nmetadata: {name: key}\nspec:\n  volumes:\n  - {name: s, secret: {secretName: k, defaultMode: 01000}}\n", "key", AreaAtomicWriter, ProfileConformance},
		{"flexVolume", "apiVersion: v1\nkind: Pod\nmetadata: {name: flex}\nspec:\n  volumes:\n  - {name: f, flexVolume: {driver: a/b}}\n", "flex", AreaFlexVolume, ProfileConformance},
		{"JSON", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "json"}, "spec": {"volumes": [{"name": "a", "emptyDir": {"mode": 488}}]}}`, "json", AreaEmptyDir, ProfileAlpha},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := LoadCases("pods.yaml", []byte(tt.data), defaults)
			if err != nil {
				t.Fatal(err)
			}
			c := cases[0]
			if c.Name != tt.wantName || c.Area != tt.area || c.Profile != tt.profile {
				t.Errorf("got name %q area %q profile %q, want %q %q %q", c.Name, c.Area, c.Profile, tt.wantName, tt.area, tt.profile)
			}
			if !c.Gates.Kubelet[GateEmptyDirVolumeMode] || !c.Gates.APIServer[GateEmptyDirVolumeMode] {
				t.Errorf("a Pod manifest gets the default gates, got %+v", c.Gates)
			}
			if c.Pod.Name != tt.wantName || len(c.Pod.Spec.Containers) != 1 {
				t.Errorf("pod not completed: name %q, %d containers", c.Pod.Name, len(c.Pod.Spec.Containers))
			}
		})
	}
	// The defaults are copied: changing one case's gates does not change another's.
	cases, err := LoadCases("pods.yaml", []byte(tests[0].data+"---\n"+tests[1].data), defaults)
	if err != nil {
		t.Fatal(err)
	}
	cases[0].Gates.Kubelet[GateEmptyDirVolumeMode] = false
	if !cases[1].Gates.Kubelet[GateEmptyDirVolumeMode] || !defaults.Kubelet[GateEmptyDirVolumeMode] {
		t.Error("gates shared between cases")
	}
}

func TestLoadCasesMultiDocument(t *testing.T) {
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: second}\nspec:\n  volumes:\n  - {name: a, emptyDir: {}}\n"
	data := "# leading comment\n---\n" + caseYAML + "--- # a pod\n" + pod + "---\n\n# nothing here\n---\n"
	cases, err := LoadCases("multi.yaml", []byte(data), Gates{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "sticky tmp,second" {
		t.Errorf("got cases %q, want [sticky tmp second] in file order", names)
	}
	_, err = LoadCases("multi.yaml", []byte(data+"apiVersion: v1\nkind: Pod\nmetadata: {name: third}\nspec: {volumes: [{name: a, emptyDir: {}}], bogus: 1}\n"), Gates{})
	if err == nil || !strings.HasPrefix(err.Error(), "multi.yaml: document 3 (line 46): spec: unknown field \"bogus\"") {
		t.Errorf("want the third non-empty document and its line named, got %v", err)
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cases.yaml")
	if err := os.WriteFile(p, []byte(caseYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, err := LoadFile(p, Gates{})
	if err != nil || len(cases) != 1 {
		t.Fatalf("LoadFile: %d cases, %v", len(cases), err)
	}
	if _, err := LoadFile(p+".missing", Gates{}); err == nil || !strings.Contains(err.Error(), "cases.yaml.missing") {
		t.Errorf("a missing file must be named, got %v", err)
	}
}

func TestValidateStepGates(t *testing.T) {
	c := &Case{Name: "x", Area: AreaFlexVolume, Profile: ProfileProposal, Pod: podWithVolumes("a"),
		After: []Step{{SetGates: &Gates{APIServer: map[string]bool{"Nope": true}}}}}
	err := c.Validate()
	want := `case "x": after[0].setGates.apiserver["Nope"]: unknown gate; volperm knows AtomicWriteVolumeUserFields, EmptyDirVolumeMode, PreservePermissions, VolumeBindMountOptions`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// A data key of a source must be one an apiserver accepts (a fuzzed key of 1,200 characters was
// accepted once and could not be written back: YAML keys stop at 1,024).
func TestSourceDataKeys(t *testing.T) {
	for key, ok := range map[string]bool{"ca.crt": true, "a-b_c.d": true, "..": false, "a/b": false, strings.Repeat("a", 254): false, `x"`: false} {
		err := validateSourceKeys("sources", map[string]map[string]string{"secret/s": {key: "v"}})
		if (err == nil) != ok {
			t.Errorf("data key %.20q: %v, want accepted %v", key, err, ok)
		}
	}
}
