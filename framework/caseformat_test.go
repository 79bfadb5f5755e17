package framework

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var updateCaseFormat = flag.Bool("update", false, "rewrite docs/case-format.md from the strict decoder's types")

// TestCaseFormatDoc: docs/case-format.md is the Case file format as the strict decoder
// (load.go decodeStrict, checkFields) accepts it: every field structFields gives each type
// reachable from a case document, with its Go doc comment, so that the doc and the decoder
// cannot drift (issue 33). Regenerate: go test ./framework -run TestCaseFormatDoc -args -update.
func TestCaseFormatDoc(t *testing.T) {
	want, err := caseFormat()
	if err != nil {
		t.Fatal(err)
	}
	const path = "../docs/case-format.md"
	if *updateCaseFormat {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/case-format.md is not what the strict decoder accepts (regenerate: go test ./framework -run TestCaseFormatDoc -args -update)")
	}
}

// caseFormat writes the doc: one table per struct type of this package reachable from
// caseDocument, fields in the decoder's order.
func caseFormat() (string, error) {
	comments, err := fieldComments(".")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`# The Case file format

Generated from the types the strict decoder of case files accepts (framework/load.go
decodeStrict: an unknown field, or a known one in another case, is an error naming its path)
and their Go doc comments; a test keeps this file equal to them (regenerate:
` + "`go test ./framework -run TestCaseFormatDoc -args -update`" + `). A file holds one or more
YAML documents separated by ` + "`---`" + `; each is a Case:

` + "```yaml" + `
apiVersion: ` + CaseAPIVersion + `
kind: ` + CaseKind + `
name: ...
` + "```" + `

or a plain ` + "`apiVersion: v1, kind: Pod`" + ` manifest, which becomes a case of its own (the pod's name,
its volumes set up and snapshotted, no probes). Kubernetes API objects inside a Case (` + "`pod`" + `,
` + "`oldPod`" + `, ` + "`persistentVolume`" + `) are decoded as the Kubernetes v1 API defines them, strictly
too. The semantics of each field are in docs/spec.md; ` + "`volperm expect -f FILE`" + ` prints what the
oracle demands of a file's cases.
`)
	seen := map[reflect.Type]bool{}
	queue := []reflect.Type{reflect.TypeFor[caseDocument]()}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if seen[t] {
			continue
		}
		seen[t] = true
		name := t.Name()
		if t == reflect.TypeFor[caseDocument]() {
			name = "Case"
		}
		fmt.Fprintf(&b, "\n## %s\n\n| field | type | meaning |\n|---|---|---|\n", name)
		fields := structFields(t)
		decoded, _ := jsonFields(t)
		var names []string
		for _, f := range fields {
			names = append(names, f.json)
		}
		if !slices.Equal(names, decoded) {
			return "", fmt.Errorf("%s: the doc's fields %v are not the decoder's %v", name, names, decoded)
		}
		for _, f := range fields {
			key := f.owner.Name() + "." + f.field.Name
			if comments[key] == "" {
				return "", fmt.Errorf("%s (%s) has no doc comment: the Case format doc needs one", key, f.json)
			}
			word, next := typeWord(f.field.Type)
			queue = append(queue, next...)
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.json, word, strings.ReplaceAll(comments[key], "|", `\|`))
		}
	}
	return b.String(), nil
}

// typeWord names t for a reader, and gives the struct types of this package it leads to.
func typeWord(t reflect.Type) (string, []reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := reflect.TypeFor[Case]().PkgPath()
	switch t.Kind() {
	case reflect.Slice:
		w, next := typeWord(t.Elem())
		return "list of " + w, next
	case reflect.Map:
		k, _ := typeWord(t.Key())
		w, next := typeWord(t.Elem())
		return "map of " + k + " to " + w, next
	case reflect.Struct:
		if t.PkgPath() == pkg {
			return "[" + t.Name() + "](#" + strings.ToLower(t.Name()) + ")", []reflect.Type{t}
		}
		return "Kubernetes `" + t.String() + "`", nil
	case reflect.String:
		if vs := enumValues[t]; len(vs) > 0 {
			return "string, one of " + strings.Join(vs, ", "), nil
		}
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
		return "integer", nil
	}
	return t.String(), nil
}

// enumValues are the values the decoder accepts for each string type of the package with a
// closed set (load.go validates them).
var enumValues = map[reflect.Type][]string{
	reflect.TypeFor[Area]():           words(Areas),
	reflect.TypeFor[Profile]():        words(Profiles),
	reflect.TypeFor[ProbeOp]():        words(ProbeOps),
	reflect.TypeFor[RuntimeFeature](): words(RuntimeFeatures),
	reflect.TypeFor[ObjectKind]():     sortedWords(objectKinds),
}

func words[T ~string](xs []T) []string {
	var out []string
	for _, x := range xs {
		out = append(out, "`"+string(x)+"`")
	}
	return out
}

func sortedWords[T ~string](m map[T]bool) []string {
	var xs []T
	for x := range m {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return words(xs)
}

// fieldComments maps "Type.Field" to the field's doc comment (or its line comment), one line.
func fieldComments(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fl := range st.Fields.List {
					text := ""
					if fl.Doc != nil {
						text = fl.Doc.Text()
					} else if fl.Comment != nil {
						text = fl.Comment.Text()
					}
					text = strings.Join(strings.Fields(text), " ")
					for _, id := range fl.Names {
						out[ts.Name.Name+"."+id.Name] = text
					}
				}
				return true
			})
		}
	}
	return out, nil
}
