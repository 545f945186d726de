#!/usr/bin/env bash
# Gateway benchmarks (bench/README.md, section gateway): failover gap against keepalived's default timing
# measured in the same run, Node-to-gateway convergence, cold-start reconcile of 1,000 Windows
# nodes with controller memory, and the CPU cost of one reconcile. Needs root (network
# namespaces), keepalived, iproute2, ping and the kube-apiserver/etcd of hack/kube-binaries.
# Everything runs in namespaces the benchmarks create and remove; traffic stays inside them.
#
#   bench/gateway/run.sh            # 5 trials per scenario
#   TRIALS=10 bench/gateway/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then echo "run as root (network namespaces)" >&2; exit 2; fi
KUBEWIN_TEST_ASSETS=${KUBEWIN_TEST_ASSETS:-$(hack/kube-binaries/build.sh)}
export KUBEWIN_TEST_ASSETS KUBEWIN_BENCH_TRIALS=${TRIALS:-5}
echo "== $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), keepalived $(keepalived --version 2>&1 | head -1 | cut -d' ' -f2)"
# The data-path benchmarks run their scenario KUBEWIN_BENCH_TRIALS times whatever b.N is.
go test -run '^$' -bench 'BenchmarkGateway(Failover|Convergence|Reconcile1000)$' -benchtime 1x -timeout 60m ./internal/gateway/
go test -run '^$' -bench 'BenchmarkLayoutRender1000$' -benchtime 3s -count 3 ./internal/gateway/
