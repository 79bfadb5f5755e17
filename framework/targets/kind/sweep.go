package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/hostfeature"
)

// stateDirPrefix names the directory a kind run keeps its kubeconfigs and its state in, under
// os.TempDir().
const stateDirPrefix = "volperm-kind-"

// stateFile holds a run's state in that directory. It is not owner.MarkerFile: the case-root
// sweeper must not remove the directory before this one has deleted the clusters it names.
const stateFile = ".volperm-kind.json"

// state is what the next run needs to clean up after this one if it is killed.
type state struct {
	Owner owner.Mark `json:"owner"`
	// Clusters are the kind clusters this run created (or was creating).
	Clusters []string `json:"clusters"`
	// MadeNetwork: the Docker network "kind" did not exist before this run.
	MadeNetwork bool `json:"madeNetwork"`
	// Kept: the run ended with --keep and handed its clusters to the user, who deletes them
	// (kind delete cluster --name NAME) and this directory, which holds their kubeconfigs: the
	// sweeper leaves both.
	Kept bool `json:"kept,omitempty"`
}

func writeState(dir string, s state) error {
	if err := sweep.WriteRecord(dir, stateFile, s); err != nil {
		return fmt.Errorf("kind target: record this run's clusters: %w", err)
	}
	return nil
}

func init() {
	sweep.Register("kind clusters", sweepClusters)
}

// sweepClusters deletes the kind clusters of runs that are no longer alive, then kind's Docker
// network when such a run made it and nothing is attached to it any more, then the run's
// directory. Clusters of live runs and clusters volperm did not record are never touched.
func sweepClusters(_ context.Context, o sweep.Options) ([]string, error) {
	var found []string
	var errs []error
	var provider *kindcluster.Provider
	for _, d := range sweep.DeadRecords(stateDirPrefix, stateFile, func(s *state) owner.Mark { return s.Owner }) {
		dir, st := d.Dir, d.Record
		if st.Kept {
			continue
		}
		for _, name := range st.Clusters {
			found = append(found, fmt.Sprintf("kind cluster %s of %s", name, st.Owner))
		}
		if st.MadeNetwork {
			found = append(found, fmt.Sprintf("docker network %s of %s, if nothing else uses it", kindNetwork, st.Owner))
		}
		found = append(found, fmt.Sprintf("directory %s of %s", dir, st.Owner))
		if o.DryRun {
			continue
		}
		if len(st.Clusters) > 0 && hostfeature.Check(hostfeature.ContainerEngine) != nil {
			errs = append(errs, fmt.Errorf("%s names clusters of a dead run, but no Docker engine answers: start one (hack/docker-up.sh) and run `volperm cleanup`", dir))
			continue
		}
		if provider == nil {
			provider = kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{io.Discard}))
		}
		var derr []error
		for _, name := range st.Clusters {
			kubeconfig := filepath.Join(dir, strings.TrimPrefix(name, "volperm-")+".kubeconfig")
			if err := provider.Delete(name, kubeconfig); err != nil {
				derr = append(derr, fmt.Errorf("delete kind cluster %s: %w", name, err))
			}
		}
		if st.MadeNetwork {
			if err := removeKindNetwork(); err != nil && !strings.Contains(err.Error(), "not found") {
				// Another run's nodes may use it: it stays, which is what that run expects.
				found = append(found, fmt.Sprintf("docker network %s kept: %v", kindNetwork, err))
			}
		}
		if len(derr) > 0 {
			errs = append(errs, derr...)
			continue
		}
		errs = append(errs, os.RemoveAll(dir))
	}
	return found, errors.Join(errs...)
}
