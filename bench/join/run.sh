#!/usr/bin/env bash
# Join time: `kubewin join` → Node Ready (binaries present, real kubelet + containerd, real
# control plane; internal/join's end-to-end test), against the 30 s target; and the user-data
# sizes against EC2's 16 KiB limit. Run as root from the repository root: bench/join/run.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
KUBEWIN_TEST_ASSETS=$(hack/kube-binaries/build.sh)
export KUBEWIN_TEST_ASSETS
out=$(go test -count="$runs" -run '^TestJoinEndToEnd$' -v ./internal/join/ 2>&1) || { echo "$out" | tail -40; exit 1; }
times=$(echo "$out" | sed -n 's/.*join: node .* Ready in \([0-9.]*\)s .*/\1/p')
echo "join → Ready (s), $runs runs: $(echo $times | tr '\n' ' ')"
echo "$times" | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "median %.1f s = %.2f of the 30 s target\n", m, m/30}'
for f in internal/bootstrap/testdata/userdata/*; do
  n=$(wc -c <"$f")
  awk -v f="$(basename "$f")" -v n="$n" 'BEGIN {printf "user-data %-22s %5d bytes = %4.1f %% of 16 KiB\n", f, n, 100*n/16384}'
done
