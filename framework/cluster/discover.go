package cluster

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
)

func (t *Target) pickNode(ctx context.Context) (string, error) {
	if t.opts.Node != "" {
		return t.opts.Node, nil
	}
	var nodes *corev1.NodeList
	err := t.call(ctx, func(ctx context.Context) (err error) {
		nodes, err = t.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("cluster target: list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return n.Name, nil
			}
		}
	}
	return "", fmt.Errorf("cluster target: no Ready node among %d", len(nodes.Items))
}

// featureGates reads the kubernetes_feature_enabled gauges of a component's /metrics
// (k8s.io/component-base/metrics/prometheus/feature), for the gates volperm knows.
func (t *Target) featureGates(ctx context.Context, path string) (map[string]bool, error) {
	var raw []byte
	err := t.call(ctx, func(ctx context.Context) (err error) {
		raw, err = t.client.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return parseFeatureGates(raw)
}

// featureGatesOnce is featureGates in one attempt, for the loops that wait for a component
// they restarted (its outage is expected there, not a fault).
func (t *Target) featureGatesOnce(ctx context.Context, path string) (map[string]bool, error) {
	raw, err := t.getOnce(ctx, path)
	if err != nil {
		return nil, err
	}
	return parseFeatureGates(raw)
}

// getOnce is one GET of path (a component's /metrics, a kubelet's /pods through the node
// proxy), bounded by callTimeout.
func (t *Target) getOnce(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return t.client.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
}

// parseFeatureGates reads the kubernetes_feature_enabled gauges of a /metrics answer.
func parseFeatureGates(raw []byte) (map[string]bool, error) {
	gates := map[string]bool{}
	err := gauges(raw, "kubernetes_feature_enabled", func(line string, val float64) {
		name := label(line, "name")
		if _, known := framework.KnownGates[name]; known {
			gates[name] = val == 1
		}
	})
	return gates, err
}

// gauges calls fn with each sample line of metric in a Prometheus text answer and its value.
func gauges(raw []byte, metric string, fn func(line string, val float64)) error {
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		fields := strings.Fields(line)
		val, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return fmt.Errorf("metric line %q: %w", line, err)
		}
		fn(line, val)
	}
	return sc.Err()
}

// label is the value of label name in a sample line ("" when it has none).
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
