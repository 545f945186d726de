#!/usr/bin/env bash
# Gateway failover benchmark (bench/README.md, "Failover gap" and "Stability under stress"):
#  1. the failover gap of the shipped timing (the API's defaults) against keepalived's default
#     timing and candidate intervals, all in the same run: three members with real keepalived
#     (configurations from render.KeepalivedConfig, started as the DaemonSet starts it), a 1 ms
#     ping from a pod address through the holder; the holder's port is cut, then keepalived
#     SIGKILLed; the gap is the last reply through the old holder to the first through the new;
#  2. a stability phase (STABILITY, default 10m) with the shipped timing and 1,000 Windows
#     nodes (4 VRRP instances) while stress-ng loads CPU, memory and disk on every member,
#     counting VRRP transitions (all spurious: no member fails).
# Needs root; keepalived, iproute2, ping, chrt; stress-ng is installed with apt when missing.
# Everything runs in network namespaces (and, for SCHED=no-rt-budget, a cpu cgroup) that the
# benchmarks create and remove; traffic stays inside them.
#
#   bench/gateway/failover.sh                       # failover + 10-minute stability, RT allowed
#   SCHED=no-rt-budget bench/gateway/failover.sh    # stability in a cpu cgroup without RT budget
#   STABILITY=2m RELOAD_EVERY=5s STRESS="--cpu 2" ADVERT=10ms TRIALS=5 bench/gateway/failover.sh
#   PHASES=stability bench/gateway/failover.sh      # only one phase (failover|stability)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" != 0 ]; then echo "run as root (network namespaces)" >&2; exit 2; fi
if ! command -v stress-ng >/dev/null; then
	apt-get install -y stress-ng || { apt-get update && apt-get install -y stress-ng; }
fi
export KUBEWIN_BENCH_TRIALS=${TRIALS:-5} KUBEWIN_BENCH_STABILITY=${STABILITY:-10m}
export KUBEWIN_BENCH_SCHED=${SCHED:-rt} KUBEWIN_BENCH_RELOAD_EVERY=${RELOAD_EVERY:-0}
export KUBEWIN_BENCH_STRESS=${STRESS:-} KUBEWIN_BENCH_ADVERT=${ADVERT:-} KUBEWIN_BENCH_LOGS=${LOGS:-}
PHASES=${PHASES:-failover stability}
echo "== $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), keepalived $(keepalived --version 2>&1 | head -1 | cut -d' ' -f2), stress-ng $(stress-ng --version | cut -d' ' -f3)"
for phase in $PHASES; do
	case $phase in
	failover) go test -v -run '^$' -bench 'BenchmarkGatewayFailover$' -benchtime 1x -timeout 60m ./internal/gateway/ ;;
	stability) go test -v -run '^$' -bench 'BenchmarkGatewayStability$' -benchtime 1x -timeout 60m ./internal/gateway/ ;;
	*) echo "unknown phase $phase" >&2; exit 2 ;;
	esac
done
