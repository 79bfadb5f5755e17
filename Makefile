# volperm: the README's two commands are `go run ./cmd/volperm run` and `make test`.
GO ?= go

.PHONY: test e2e build e2e-binary bench gobench run fuzz mutants docs sample

# Every build of this repository, volperm's own and Kubernetes code's (agents/upstream, e2e, the
# node image, the kubelets, the probe and runner images, hydrophone), is compiled the one way
# framework/k8srelease BuildEnv and BuildFlags say, so that Go's build cache compiles each package
# once per machine (issue 34: volperm's client-go, api and Docker client were compiled twice, for
# make test and for the images). Exported, so that the go commands the tests start build the same
# way; .ci/run exports the same (a test checks both against k8srelease).
export CGO_ENABLED := 0
export GOFLAGS := -trimpath $(filter-out -trimpath,$(GOFLAGS))

# The unit tests (the suites run the whole catalogue on the reference target; cmd/volperm builds
# and runs the binary several times). The end-to-end tests (framework/e2etest: runs killed at
# random moments, a whole run handed in and verified, containers by the dozen) skip here: `make
# e2e` runs them, as CI does beside its kind lanes (issue 34: they were 75 of make test's 96 s,
# and CI's lanes start after make test).
test:
	$(GO) vet ./...
	cd agents/upstream && $(GO) vet ./...
	cd e2e && $(GO) vet ./... && $(GO) test . -count=1
	$(GO) test ./... -count=1 -timeout 30m

# The end-to-end tests make test skips, by name (framework/e2etest TestListed keeps the list).
E2E_TESTS ?= TestBatchedVsPerCase|TestCancelLeavesNothing|TestReportVerify|TestRunKilled|TestVerdicts
e2e:
	VOLPERM_E2E=1 $(GO) test -count=1 -timeout 30m -run '^($(E2E_TESTS))$$' ./cmd/volperm ./framework/execagent ./framework/targets/container

# bin/volperm-agent is the same binary: invoked under that name it is the reference exec agent.
# The version every report carries is the tree's VERSION with the commit and local changes Go
# stamps (-buildvcs=auto, whatever GOFLAGS says; framework/report versionOf, docs/certify.md
# "Versions").
build:
	$(GO) build -buildvcs=auto -o bin/volperm ./cmd/volperm
	ln -sf volperm bin/volperm-agent

# volperm's suites in a test binary of the Kubernetes e2e framework (docs/e2e-framework.md): its
# own module, e2e/, so that the core module stays free of k8s.io/kubernetes.
e2e-binary:
	cd e2e && $(GO) test -c -o ../bin/volperm-e2e.test ./volperm-e2e

# volperm bench (docs/bench.md): reports/bench.md and bench.json, a line appended to the history
# reports/bench/history.jsonl (its plot: history.svg), each median against its last run there;
# COMPARE=... picks the comparisons (the kind ones create clusters), RUNS the runs per side.
# gobench: the Go benchmarks.
COMPARE ?= oracle-vs-reference,helpers-vs-one-shot,tmpfs-vs-disk-roots,mounts-0-vs-500,mounts-0-vs-2000,mounts-kernel-vs-table,served-vs-per-call,batched-vs-per-case
RUNS ?= 3
bench: build
	bin/volperm bench --compare $(COMPARE) --runs $(RUNS)

gobench:
	$(GO) test ./suites/ -run '^$$' -bench . -benchtime 2s -timeout 30m

run:
	$(GO) run ./cmd/volperm run

# The counts the docs quote, from the code: rewrites every <!--volperm:NAME-->N<!--/volperm-->
# of README.md and docs/*.md (framework/docnumbers; TestDocNumbers fails when one is stale).
docs:
	$(GO) test ./framework/docnumbers -run '^TestDocNumbers$$' -count=1 -args -update

# reports/sample: the whole catalogue on the reference target, as root, from a commit without
# local changes (framework/docnumbers TestSample keeps its counts and cases equal to the
# catalogue's and its volperm to VERSION; its times, dates and kernel are this run's).
sample: build
	rm -rf reports/sample
	bin/volperm run --report-dir reports/sample
	rm -f reports/sample/run.log

# Every fuzz target for FUZZTIME inputs (or a duration) each (docs/fuzzing.md); CI runs 20000x.
FUZZTIME ?= 100000x
fuzz:
	hack/fuzz.sh $(FUZZTIME)

# The mutation self-test (docs/mutants.md): the catalogue against every mutant of nodeimpl/mutant
# on the reference node, then through the exec target on the reference agent built with the
# seam; fails naming each certified mutant. MUTANTS=a,b selects by substring. EXEC=sample (the
# default: at most 16 of each mutant's killers through exec), full (every case reaching it) or off.
MUTANTS ?=
EXEC ?= sample
mutants:
	VOLPERM_MUTANTS=$(MUTANTS) VOLPERM_MUTANTS_EXEC=$(EXEC) $(GO) test -tags volperm_mutants ./mutation/ -run "TestMutants|TestRecordingOwnsAdmission|TestReportDiff" -count=1 -v -timeout 30m
