package framework

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// What a Case document declares itself as (manifests/cases/*.yaml).
const (
	CaseAPIVersion = "volperm.dev/v1"
	CaseKind       = "Case"
)

// caseDocument is a Case as written in a file: its fields plus apiVersion and kind.
type caseDocument struct {
	// APIVersion is volperm.dev/v1.
	APIVersion string `json:"apiVersion"`
	// Kind is Case.
	Kind string `json:"kind"`
	Case
}

// document is one `---`-separated part of a file.
type document struct {
	index int // 1-based, counting only non-empty documents
	line  int // 1-based line of the document's first line in the file
	data  []byte
}

// Bounds on what a case file may hold, so that a hostile or broken file gets a one-line error in
// bounded time and memory. The catalogue's largest case has a few volumes; these are far above.
const (
	MaxFileBytes = 16 << 20
	MaxVolumes   = 1000
)

// LoadFile reads path with LoadCases, naming the file in every error.
func LoadFile(path string, defaults Gates) ([]*Case, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes; a case file may have at most %d (16 MiB): split it", path, st.Size(), MaxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	return LoadCases(path, data, defaults)
}

// LoadCases reads one YAML/JSON file: one or more documents separated by `---`, each either a Case
// (apiVersion: volperm.dev/v1, kind: Case) or a plain v1 Pod manifest (apiVersion: v1, kind: Pod). A Pod becomes a Case
// named after the pod, area inferred from its volumes, profile "conformance" unless it sets an emptyDir mode ("alpha"),
// with the gates passed in `defaults` (used for Pods only; Case documents carry their own gates).
// Decoding is strict (unknown fields are errors) and YAML 1.1 octal literals are numbers (0750 = 488).
// Every case is validated and Complete()d; every error is one line naming the file.
func LoadCases(name string, data []byte, defaults Gates) ([]*Case, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes; a case file may have at most %d (16 MiB): split it", name, len(data), MaxFileBytes)
	}
	var cases []*Case
	seen := map[string]int{}
	for _, d := range splitDocuments(data) {
		c, err := decodeDocument(name, d, defaults)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d (line %d): %w", name, d.index, d.line, err)
		}
		if c == nil {
			continue
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if first, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("%s: document %d (line %d): case %q: name: already used by document %d; names must be unique", name, d.index, d.line, c.Name, first)
		}
		seen[c.Name] = d.index
		c.Complete()
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s: no documents: write a Case (apiVersion: %s, kind: %s) or a Pod (apiVersion: v1, kind: Pod)", name, CaseAPIVersion, CaseKind)
	}
	return cases, nil
}

var separator = regexp.MustCompile(`^---\s*(#.*)?$`)

// splitDocuments cuts data at `---` lines; documents holding only comments or blanks are dropped.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur []byte
	start := 1
	flush := func() {
		if !blank(cur) {
			docs = append(docs, document{index: len(docs) + 1, line: start, data: cur})
		}
	}
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if separator.Match(bytes.TrimRight(line, "\r\n")) {
			flush()
			cur, start = nil, i+2
			continue
		}
		cur = append(cur, line...)
	}
	flush()
	return docs
}

func blank(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		l := bytes.TrimSpace(line)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// decodeDocument turns one document into a Case (nil for an empty document).
func decodeDocument(file string, d document, defaults Gates) (*Case, error) {
	j, err := yaml.YAMLToJSONStrict(d.data)
	if err != nil {
		// Line numbers of the YAML parser count from the document; make them count from the file.
		msg := yamlLine.ReplaceAllStringFunc(err.Error(), func(s string) string {
			n, _ := strconv.Atoi(strings.TrimPrefix(s, "line "))
			return fmt.Sprintf("line %d", n+d.line-1)
		})
		return nil, fmt.Errorf("invalid YAML: %s; fix the syntax", oneLine(strings.TrimPrefix(msg, "yaml: ")))
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("invalid document: %w", err)
	}
	if generic == nil {
		return nil, nil
	}
	head, ok := generic.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a document must be a mapping with apiVersion and kind, not %s", jsonKind(generic))
	}
	apiVersion, _ := head["apiVersion"].(string)
	kind, _ := head["kind"].(string)
	switch {
	case apiVersion == CaseAPIVersion && kind == CaseKind:
		var doc caseDocument
		if err := decodeStrict(d.data, head, &doc); err != nil {
			return nil, err
		}
		c := doc.Case
		return &c, nil
	case apiVersion == "v1" && kind == "Pod":
		var pod corev1.Pod
		if err := decodeStrict(d.data, head, &pod); err != nil {
			return nil, err
		}
		return caseFromPod(file, d.index, &pod, defaults)
	default:
		return nil, fmt.Errorf("apiVersion %q kind %q: not a case; write apiVersion: %s, kind: %s or apiVersion: v1, kind: Pod", apiVersion, kind, CaseAPIVersion, CaseKind)
	}
}

// decodeStrict rejects unknown fields (exact case, with their path) and then decodes into out.
func decodeStrict(data []byte, generic map[string]any, out any) error {
	if err := checkFields(generic, reflect.TypeOf(out).Elem(), ""); err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The Case is embedded in caseDocument: its fields are named without the prefix.
			return fmt.Errorf("%s: cannot use %s as %s; fix the value", strings.TrimPrefix(te.Field, "Case."), te.Value, te.Type)
		}
		msg := err.Error()
		for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		return fmt.Errorf("%s; fix the value", oneLine(msg))
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkFields walks v (decoded JSON) along t and reports the first key t has no field for,
// matching names exactly (encoding/json alone would accept "Name" for "name").
func checkFields(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil // decodes itself (Quantity, Time, IntOrString)
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, reported by the decoder
		}
		names, fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[k]
			if !ok {
				return unknownField(path, k, t, names)
			}
			if err := checkFields(obj[k], ft, joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, _ := v.([]any)
		for i, e := range arr {
			if err := checkFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		for k, e := range obj {
			if err := checkFields(e, t.Elem(), fmt.Sprintf("%s[%q]", path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func unknownField(path, key string, t reflect.Type, names []string) error {
	typeName := t.Name()
	if t == reflect.TypeFor[caseDocument]() {
		typeName = CaseKind
	}
	article := "a"
	if strings.ContainsAny(typeName[:1], "AEIOU") {
		article = "an"
	}
	where := ""
	if path != "" {
		where = path + ": "
	}
	hint := ""
	for _, n := range names {
		if strings.EqualFold(n, key) {
			hint = fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return fmt.Errorf("%sunknown field %q%s; %s %s has: %s", where, key, hint, article, typeName, strings.Join(names, ", "))
}

// jsonFields lists the JSON names of t's fields in declaration order, embedded structs inlined.
func jsonFields(t reflect.Type) ([]string, map[string]reflect.Type) {
	var names []string
	fields := map[string]reflect.Type{}
	for _, f := range structFields(t) {
		names = append(names, f.json)
		fields[f.json] = f.field.Type
	}
	return names, fields
}

// structField is one field a JSON object of a struct type decodes: its JSON name, the Go field
// and the struct type that declares it (an embedded struct's, inlined).
type structField struct {
	json  string
	field reflect.StructField
	owner reflect.Type
}

// structFields lists t's JSON fields in declaration order, embedded structs inlined.
func structFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, structFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, structField{json: name, field: f, owner: t})
	}
	return out
}

// oneLine joins a multi-line parser message ("unmarshal errors:\n  line 3: ...") into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// caseFromPod makes a Case of a plain Pod manifest.
func caseFromPod(file string, index int, pod *corev1.Pod, defaults Gates) (*Case, error) {
	if pod.Name == "" {
		return nil, errors.New("metadata.name: Required value: a Pod manifest needs a name, it names the case")
	}
	area, err := podArea(pod)
	if err != nil {
		return nil, err
	}
	profile := ProfileConformance
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			profile = ProfileAlpha // the mode field is KEP-5502's alpha API
		}
	}
	return &Case{
		Name:        pod.Name,
		Area:        area,
		Profile:     profile,
		Description: fmt.Sprintf("Pod manifest %s, document %d", file, index),
		Gates:       Gates{APIServer: maps.Clone(defaults.APIServer), Kubelet: maps.Clone(defaults.Kubelet)},
		Pod:         pod,
	}, nil
}

// podArea is the area of the pod's first volume of a type some area claims (AreaInfo.VolumeTypes).
func podArea(pod *corev1.Pod) (Area, error) {
	for _, v := range pod.Spec.Volumes {
		if a, ok := volumeArea(VolumeType(v)); ok {
			return a, nil
		}
	}
	var claimed []string
	for _, a := range areas {
		claimed = append(claimed, a.VolumeTypes...)
	}
	return "", fmt.Errorf("spec.volumes: pod %q has no %s volume; volperm checks those, add one", pod.Name, joinTypes(claimed))
}

// maxHarnessMode bounds the modes the harness itself applies (host fixtures, storage files,
// container chmods): permission bits with setuid/setgid/sticky.
const maxHarnessMode = 07777

var objectKinds = map[ObjectKind]bool{KindNothing: true, KindDirectory: true, KindFile: true, KindSocket: true, KindCharDev: true, KindBlockDev: true, KindSymlink: true}

// Validate checks what volperm itself interprets (everything but the pod spec, which is API data
// the apiserver judges) and returns the first problem as `case "x": field.path: what to do`.
func (c *Case) Validate() error {
	if c.Name == "" {
		return errors.New("name: Required value: every case needs a name that reads on its own in a report")
	}
	if err := c.validate(); err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	return nil
}

func (c *Case) validate() error {
	if !slices.Contains(Areas, c.Area) {
		return fmt.Errorf("area: unknown %q; use one of %s", c.Area, joinAny(Areas))
	}
	if !slices.Contains(Profiles, c.Profile) {
		return fmt.Errorf("profile: unknown %q; use one of %s", c.Profile, joinAny(Profiles))
	}
	if err := validateGates("gates", c.Gates); err != nil {
		return err
	}
	if err := c.validateReleases(); err != nil {
		return err
	}
	switch {
	case c.Pod == nil && c.PersistentVolume == nil:
		return errors.New("pod: Required value: a case admits a pod or a persistentVolume")
	case c.Pod != nil && c.PersistentVolume != nil:
		return errors.New("persistentVolume: a case admits a pod or a persistentVolume, not both; split it in two cases")
	case c.OldPod != nil && c.Pod == nil:
		return errors.New("oldPod: an update needs the new pod too; set pod")
	case len(c.OldPreservePermissions) > 0 && c.OldPod == nil:
		return errors.New("oldPreservePermissions: names volumes of oldPod, which is not set")
	}
	for _, p := range []*corev1.Pod{c.Pod, c.OldPod} {
		if p != nil && len(p.Spec.Volumes) > MaxVolumes {
			return fmt.Errorf("pod: %d volumes; a case may have at most %d: a case checks a rule, split a larger one", len(p.Spec.Volumes), MaxVolumes)
		}
	}

	vols := podVolumeTypes(c.Pod)
	for i, n := range c.PreservePermissions {
		if err := atomicWriterVolume(fmt.Sprintf("preservePermissions[%d]", i), "pod", n, vols); err != nil {
			return err
		}
	}
	for i, n := range c.OldPreservePermissions {
		if err := atomicWriterVolume(fmt.Sprintf("oldPreservePermissions[%d]", i), "oldPod", n, podVolumeTypes(c.OldPod)); err != nil {
			return err
		}
	}
	for i, f := range c.RuntimeLacks {
		if !slices.Contains(RuntimeFeatures, f) {
			return fmt.Errorf("runtimeLacks[%d]: unknown %q; use one of %s", i, f, joinAny(RuntimeFeatures))
		}
	}
	if c.SandboxFails() && (len(c.After) > 0 || len(c.Probes) > 0) {
		return errors.New("runtimeLacks: the pod's sandbox cannot be created (hostUsers: false on a runtime without userNamespaces), so no container runs its steps or probes; remove after and probes")
	}
	if err := c.validateHost(); err != nil {
		return err
	}
	if err := c.validateSELinux(); err != nil {
		return err
	}
	if err := validateSourceKeys("sources", c.Sources); err != nil {
		return err
	}
	for _, vol := range sortedKeys(c.Storage) {
		field := fmt.Sprintf("storage[%q]", vol)
		if err := volumeOfType(field, vol, vols, "flexVolume"); err != nil {
			return err
		}
		for i, f := range c.Storage[vol] {
			ff := fmt.Sprintf("%s[%d]", field, i)
			if !localPath(f.Path) {
				return fmt.Errorf("%s.path: %q must be \".\" (the storage's root) or a clean path below it, e.g. \"dir/file\"", ff, f.Path)
			}
			if f.Path == "." && f.Symlink != "" {
				return fmt.Errorf("%s: the storage's root (\".\") cannot be a symlink", ff)
			}
			if f.Dir && f.Symlink != "" {
				return fmt.Errorf("%s: set dir or symlink, not both", ff)
			}
			if f.Mount && (f.Symlink != "" || f.Path == ".") {
				return fmt.Errorf("%s: mount makes a directory below the storage's root: not the root, not a symlink", ff)
			}
			if err := harnessMode(ff+".mode", f.Mode); err != nil {
				return err
			}
		}
	}
	for i, s := range c.After {
		if err := validateStep(fmt.Sprintf("after[%d]", i), s, vols); err != nil {
			return err
		}
	}
	return validateProbes(c.Probes, vols, c.Pod)
}

// validateReleases checks the cell's releases (the version-skew policy) and that no gate is set
// on a component whose release lacks it: such a cell cannot exist, since that release refuses
// the gate (docs/spec.md "Releases").
func (c *Case) validateReleases() error {
	if err := c.Releases.validate(); err != nil {
		return err
	}
	if c.FieldValidation != "" && c.FieldValidation != FieldValidationStrict {
		return fmt.Errorf("fieldValidation: %q; use \"\" (Warn, as client-go sends) or %q (as kubectl sends)", c.FieldValidation, FieldValidationStrict)
	}
	sets := []struct {
		field string
		g     Gates
	}{{"gates", c.Gates}}
	// A setGates step's kubelet gates exist in the kubelet release in force at that step.
	kubeletAt := []string{c.Releases.Of(false)}
	kubelet := c.Releases.Of(false)
	for i, s := range c.After {
		if s.KubeletRelease != "" {
			field := fmt.Sprintf("after[%d].kubeletRelease", i)
			if !slices.Contains(SupportedReleases, s.KubeletRelease) {
				return fmt.Errorf("%s: unknown release %q; use one of %s", field, s.KubeletRelease, strings.Join(SupportedReleases, ", "))
			}
			if err := (Releases{APIServer: c.Releases.APIServer, Kubelet: s.KubeletRelease}).validate(); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			kubelet = s.KubeletRelease
		}
		if s.SetGates != nil {
			sets = append(sets, struct {
				field string
				g     Gates
			}{fmt.Sprintf("after[%d].setGates", i), *s.SetGates})
			kubeletAt = append(kubeletAt, kubelet)
		}
	}
	for j, s := range sets {
		for _, comp := range []struct {
			name  string
			api   bool
			gates map[string]bool
		}{{"apiserver", true, s.g.APIServer}, {"kubelet", false, s.g.Kubelet}} {
			for _, g := range sortedKeys(comp.gates) {
				if _, known := KnownGates[g]; !known {
					continue // validateGates and validateStep name it
				}
				r := c.Releases.Of(true)
				if !comp.api {
					r = kubeletAt[j]
				}
				if !ReleaseHas(r, g) {
					return fmt.Errorf("%s.%s: gate %s does not exist in %s %s (it refuses the flag): leave it unset there", s.field, comp.name, g, comp.name, r)
				}
			}
		}
	}
	return c.validateProjectionReleases()
}

// validateProjectionReleases: a clusterTrustBundle or podCertificate projection, or an image
// volume, is a case of the releases whose apiserver and kubelet have it on by default
// (firstRelease; before, their gates are off by default and an apiserver drops the source).
func (c *Case) validateProjectionReleases() error {
	if c.Pod == nil {
		return nil
	}
	for i, v := range c.Pod.Spec.Volumes {
		if v.Image != nil && !c.AdmissionOnly {
			// docs/spec.md [mounts.image-volume]: the probe image is the one volperm models, and
			// on a node without a registry it is never pulled.
			if v.Image.Reference != ProbeImage || (v.Image.PullPolicy != corev1.PullNever && v.Image.PullPolicy != corev1.PullIfNotPresent) {
				return fmt.Errorf("pod.spec.volumes[%d].image: a case on a node mounts the probe image: reference %s, pullPolicy Never or IfNotPresent (the target gives its tag); got %q, %q", i, ProbeImage, v.Image.Reference, v.Image.PullPolicy)
			}
		}
		if v.Image != nil {
			for _, r := range []string{c.Releases.Of(true), c.Releases.Of(false)} {
				if !ReleaseHas(r, FieldImageVolume) {
					return fmt.Errorf("pod.spec.volumes[%d].image: on by default from %s only, not in %s", i, firstRelease[FieldImageVolume], r)
				}
			}
		}
		if v.Projected == nil {
			continue
		}
		for j, src := range v.Projected.Sources {
			field := ""
			switch {
			case src.ClusterTrustBundle != nil:
				field = FieldClusterTrustBundle
			case src.PodCertificate != nil:
				field = FieldPodCertificate
			default:
				continue
			}
			for _, r := range []string{c.Releases.Of(true), c.Releases.Of(false)} {
				if !ReleaseHas(r, field) {
					return fmt.Errorf("pod.spec.volumes[%d].projected.sources[%d].%s: on by default from %s only, not in %s", i, j, field, firstRelease[field], r)
				}
			}
		}
	}
	return nil
}

func (c *Case) validateHost() error {
	seen := map[string]int{}
	for i, h := range c.Host {
		field := fmt.Sprintf("host[%d]", i)
		if !absPath(h.Path) {
			return fmt.Errorf("%s.path: %q must be absolute and clean, e.g. \"/var/run/volperm/x\"", field, h.Path)
		}
		if j, dup := seen[h.Path]; dup {
			return fmt.Errorf("%s.path: %q is already declared by host[%d]", field, h.Path, j)
		}
		seen[h.Path] = i
		if !objectKinds[h.Kind] {
			return fmt.Errorf("%s.kind: unknown %q; use one of nothing, directory, file, socket, chardev, blockdev, symlink", field, h.Kind)
		}
		switch {
		case h.Kind == KindSymlink && !absPath(h.Target):
			return fmt.Errorf("%s.target: a symlink needs an absolute, clean target, got %q", field, h.Target)
		case h.Kind != KindSymlink && h.Target != "":
			return fmt.Errorf("%s.target: only a symlink has a target; remove it or use kind symlink", field)
		}
		if err := harnessMode(field+".mode", h.Mode); err != nil {
			return err
		}
	}
	return nil
}

// validateSourceKeys checks the object names of sources (Case.Sources, a step's updateSources)
// and their data keys, which an apiserver accepts only as ConfigMap keys (apimachinery
// validation.IsConfigMapKey: at most 253 of [-._a-zA-Z0-9], not "." or ".."). A fuzzed key of
// 1,200 characters was accepted once and could not be written back (YAML keys stop at 1,024).
func validateSourceKeys(field string, sources map[string]map[string]string) error {
	for _, k := range sortedKeys(sources) {
		kind, name, _ := strings.Cut(k, "/")
		if (kind != "secret" && kind != "configmap") || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("%s[%q]: key must be \"secret/NAME\" or \"configmap/NAME\"", field, k)
		}
		for _, key := range sortedKeys(sources[k]) {
			if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
				shown := key
				if len(shown) > 40 {
					shown = shown[:40] + "..."
				}
				return fmt.Errorf("%s[%q][%q]: not a valid data key: %s", field, k, shown, strings.Join(msgs, "; "))
			}
		}
	}
	return nil
}

func validateStep(field string, s Step, vols map[string]string) error {
	if n := s.fieldsSet(); n != 1 {
		var names []string
		for _, k := range StepKinds() {
			names = append(names, string(k))
		}
		return fmt.Errorf("%s: set exactly one of %s (found %d); use one step per action", field, strings.Join(names, ", "), n)
	}
	switch s.Kind() {
	case StepChmod:
		if err := volumeOfType(field+".chmod.volume", s.Chmod.Volume, vols); err != nil {
			return err
		}
		if !localPath(s.Chmod.Path) {
			return fmt.Errorf("%s.chmod.path: %q must be \".\" or a clean path below the volume root", field, s.Chmod.Path)
		}
		return harnessMode(field+".chmod.mode", s.Chmod.Mode)
	case StepSetGates:
		return validateGates(field+".setGates", *s.SetGates)
	case StepUpdateSources:
		return validateSourceKeys(field+".updateSources", s.UpdateSources)
	}
	return nil
}

func validateProbes(probes []Probe, vols map[string]string, pod *corev1.Pod) error {
	seen := map[string]int{}
	for i, p := range probes {
		field := fmt.Sprintf("probes[%d]", i)
		if p.Name == "" {
			return fmt.Errorf("%s.name: Required value: a probe is reported by its name", field)
		}
		if j, dup := seen[p.Name]; dup {
			return fmt.Errorf("%s.name: %q is already used by probes[%d]; probe names must be unique", field, p.Name, j)
		}
		seen[p.Name] = i
		if err := volumeOfType(field+".volume", p.Volume, vols); err != nil {
			return err
		}
		if !slices.Contains(ProbeOps, p.Op) {
			return fmt.Errorf("%s.op: unknown %q; use one of %s", field, p.Op, joinAny(ProbeOps))
		}
		if !localPath(p.Path) {
			return fmt.Errorf("%s.path: %q must be \".\" or a clean path below the volume root", field, p.Path)
		}
		switch {
		case p.Op == OpRename && (p.To == "." || !localPath(p.To)):
			return fmt.Errorf("%s.to: rename needs a clean path below the volume root, got %q", field, p.To)
		case p.Op != OpRename && p.To != "":
			return fmt.Errorf("%s.to: only op rename has a target; remove it", field)
		case p.Op == OpFill && (p.Size < 1 || p.Size > MaxFill):
			return fmt.Errorf("%s.size: fill writes 1..%d bytes, got %d", field, MaxFill, p.Size)
		case p.Op != OpFill && p.Size != 0:
			return fmt.Errorf("%s.size: only op fill writes bytes; remove it", field)
		case p.Op == OpChmod && (p.Mode == nil || *p.Mode > maxHarnessMode):
			return fmt.Errorf("%s.mode: chmod needs a mode 0..07777 (0640 in YAML, 416 in JSON)", field)
		case p.Op != OpChmod && p.Mode != nil:
			return fmt.Errorf("%s.mode: only op chmod sets a mode; remove it", field)
		case p.Op == OpChown && (p.Owner == nil || p.Owner.UID < 0 || p.Owner.GID < 0):
			return fmt.Errorf("%s.owner: chown needs owner {uid, gid}, both >= 0", field)
		case p.Op != OpChown && p.Owner != nil:
			return fmt.Errorf("%s.owner: only op chown sets an owner; remove it", field)
		case p.As.UID < 0 || p.As.GID < 0:
			return fmt.Errorf("%s.as: uid and gid must be >= 0, got %d:%d", field, p.As.UID, p.As.GID)
		case p.As.Container && (p.As.UID != 0 || p.As.GID != 0 || len(p.As.Groups) > 0):
			return fmt.Errorf("%s.as: container takes the container's own uid, gid and groups; remove uid, gid and groups", field)
		case p.As.Container && (pod == nil || len(pod.Spec.Containers) == 0):
			return fmt.Errorf("%s.as: container needs a pod with a container; add one to pod.spec.containers", field)
		}
	}
	return nil
}

func validateGates(field string, g Gates) error {
	for comp, m := range map[string]map[string]bool{"apiserver": g.APIServer, "kubelet": g.Kubelet} {
		for _, name := range sortedKeys(m) {
			if _, ok := KnownGates[name]; !ok {
				return fmt.Errorf("%s.%s[%q]: unknown gate; volperm knows %s", field, comp, name, strings.Join(sortedKeys(KnownGates), ", "))
			}
		}
	}
	return nil
}

func harnessMode(field string, m uint32) error {
	if m > maxHarnessMode {
		return fmt.Errorf("%s: 0o%o is out of range 0..07777", field, m)
	}
	return nil
}

// podVolumeTypes maps the pod's volume names to their VolumeType.
func podVolumeTypes(p *corev1.Pod) map[string]string {
	if p == nil {
		return nil
	}
	m := map[string]string{}
	for _, v := range p.Spec.Volumes {
		m[v.Name] = VolumeType(v)
	}
	return m
}

// volumeOfType checks that the pod has volume name and, when types are given, that it is one of them.
func volumeOfType(field, name string, vols map[string]string, types ...string) error {
	t, ok := vols[name]
	if !ok {
		return fmt.Errorf("%s: no volume %q in the pod; name one of [%s]", field, name, strings.Join(sortedKeys(vols), ", "))
	}
	if len(types) > 0 && !slices.Contains(types, t) {
		return fmt.Errorf("%s: volume %q is %s; only %s volumes can be named here", field, name, t, strings.Join(types, ", "))
	}
	return nil
}

// atomicWriterVolume checks a preservePermissions entry (seed 002 "Scope Of the Change").
func atomicWriterVolume(field, pod, name string, vols map[string]string) error {
	if err := volumeOfType(field, name, vols, "secret", "configMap", "downwardAPI", "projected"); err != nil {
		return fmt.Errorf("%s (in %s)", err, pod)
	}
	return nil
}

func absPath(p string) bool {
	return strings.HasPrefix(p, "/") && p != "/" && pathClean(p)
}

func localPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && pathClean(p) && p != ".." && !strings.HasPrefix(p, "../")
}

// pathClean reports whether p is already in path.Clean form.
func pathClean(p string) bool {
	return p == path.Clean(p)
}

func joinAny[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Document renders c as a document LoadCases reads back (JSON, apiVersion and kind first): the
// fuzz targets seed their corpora with the catalogue this way.
func Document(c *Case) ([]byte, error) {
	return json.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		*Case
	}{CaseAPIVersion, CaseKind, c})
}
