package kind

import (
	"fmt"
	"io/fs"
	"maps"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
	kindconfig "github.com/volperm/volperm/kind-config"
)

// Config is one kind cluster configuration and the gates it gives the components.
type Config struct {
	Name  string
	Raw   []byte
	Gates framework.Gates
}

// Configs reads the embedded kind-config/*.yaml and the gates each one sets.
func Configs() ([]Config, error) {
	files, err := fs.Glob(kindconfig.Configs, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Config
	for _, f := range files {
		raw, err := fs.ReadFile(kindconfig.Configs, f)
		if err != nil {
			return nil, err
		}
		g, err := configGates(raw)
		if err != nil {
			return nil, fmt.Errorf("kind-config/%s: %w", f, err)
		}
		out = append(out, Config{Name: strings.TrimSuffix(f, ".yaml"), Raw: raw, Gates: g})
	}
	return out, nil
}

// configGates reads the gates of a kind config's kubeadmConfigPatches: the apiserver's
// --feature-gates (ClusterConfiguration v1beta4 extraArgs) and the KubeletConfiguration's
// featureGates. A gate not named there has its default.
func configGates(raw []byte) (framework.Gates, error) {
	var cfg struct {
		Patches []string `json:"kubeadmConfigPatches"`
	}
	g := framework.Gates{APIServer: map[string]bool{}, Kubelet: map[string]bool{}}
	for name, def := range framework.KnownGates {
		g.APIServer[name], g.Kubelet[name] = def, def
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return g, err
	}
	for _, p := range cfg.Patches {
		var doc struct {
			Kind      string `json:"kind"`
			APIServer struct {
				ExtraArgs []struct{ Name, Value string } `json:"extraArgs"`
			} `json:"apiServer"`
			FeatureGates map[string]bool `json:"featureGates"`
		}
		if err := yaml.Unmarshal([]byte(p), &doc); err != nil {
			return g, fmt.Errorf("kubeadmConfigPatches: %w", err)
		}
		switch doc.Kind {
		case "ClusterConfiguration":
			for _, a := range doc.APIServer.ExtraArgs {
				if a.Name != "feature-gates" {
					continue
				}
				gates, err := parseGateFlag(a.Value)
				if err != nil {
					return g, fmt.Errorf("apiserver %w", err)
				}
				maps.Copy(g.APIServer, gates)
			}
		case "KubeletConfiguration":
			for k, v := range doc.FeatureGates {
				g.Kubelet[k] = v
			}
		}
	}
	return g, nil
}

// configOfRelease is cfg for a cluster of release: the feature gates volperm knows that the
// release lacks are left out of the apiserver's --feature-gates and the KubeletConfiguration's
// featureGates (its components refuse a gate they do not know: framework.GatesOfRelease), and
// out of cfg.Gates. The default release's configs are returned as they are.
func configOfRelease(cfg Config, release string) (Config, error) {
	if release == nodeimage.KubernetesVersion {
		return cfg, nil
	}
	var doc map[string]any
	if err := yaml.Unmarshal(cfg.Raw, &doc); err != nil {
		return cfg, err
	}
	patches, _ := doc["kubeadmConfigPatches"].([]any)
	for i, p := range patches {
		text, _ := p.(string)
		var patch map[string]any
		if err := yaml.Unmarshal([]byte(text), &patch); err != nil {
			return cfg, fmt.Errorf("kubeadmConfigPatches: %w", err)
		}
		changed := false
		switch patch["kind"] {
		case "ClusterConfiguration":
			api, _ := patch["apiServer"].(map[string]any)
			args, _ := api["extraArgs"].([]any)
			var keep []any
			for _, a := range args {
				arg, _ := a.(map[string]any)
				value, _ := arg["value"].(string)
				if arg["name"] != "feature-gates" {
					keep = append(keep, a)
					continue
				}
				changed = true
				gates, err := parseGateFlag(value)
				if err != nil {
					return cfg, err
				}
				if gates = framework.GatesOfRelease(gates, release); len(gates) > 0 {
					arg["value"] = gateFlag(gates)
					keep = append(keep, arg)
				}
			}
			if changed {
				api["extraArgs"] = keep
			}
		case "KubeletConfiguration":
			out, err := gatesOfRelease([]byte(text), release)
			if err != nil {
				return cfg, err
			}
			patches[i] = string(out)
		}
		if changed {
			out, err := yaml.Marshal(patch)
			if err != nil {
				return cfg, err
			}
			patches[i] = string(out)
		}
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return cfg, err
	}
	return Config{Name: cfg.Name, Raw: raw, Gates: framework.Gates{
		APIServer: framework.GatesOfRelease(cfg.Gates.APIServer, release),
		Kubelet:   framework.GatesOfRelease(cfg.Gates.Kubelet, release)}}, nil
}
