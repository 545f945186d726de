#!/usr/bin/env bash
# Benchmark `kubewin diagnose` against ripgrep on the same input and literal set.
#
# Generates a deterministic klog mix (default 1 GiB) in a temporary directory that is removed on
# exit, warms the page cache, then runs once each:
#   kubewin diagnose -o json MIX          (full analysis: prefilter, regexp, parsing, grouping)
#   rg -F -c -f LITERALS MIX              (the catalogue's prefilter literals, count only)
# and prints wall time, CPU time, throughput and peak RSS of both and the throughput ratio.
# Targets: ratio >= 0.5, peak RSS < 64 MiB. Two more lines separate memory: `kubewin version`
# (the CLI binary's start-up baseline, which every command pays) and bench/diagnose/engine (the
# same scan behind a minimal main).
#
# Usage: bench/diagnose/run.sh [SIZE_IN_BYTES]
set -euo pipefail
cd "$(dirname "$0")/../.."

size=${1:-1073741824}
for tool in rg /usr/bin/time go; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install ripgrep time)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kubewin-bench-diagnose.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/kubewin" ./cmd/kubewin
go build -o "$tmp/engine" ./bench/diagnose/engine
go run ./bench/diagnose/gen -out "$tmp/mix.log" -literals "$tmp/literals.txt" -size "$size"
bytes=$(stat -c %s "$tmp/mix.log")
cat "$tmp/mix.log" >/dev/null

# measure NAME CMD...: runs CMD once; sets wall, cpu, rss (KiB).
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time.$name" "$@" >"$tmp/out.$name" 2>"$tmp/err.$name" || true
	read -r wall user sys rss < <(tail -n 1 "$tmp/time.$name")
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
}

measure kubewin "$tmp/kubewin" diagnose -o json "$tmp/mix.log"
k_wall=$wall k_cpu=$cpu k_rss=$rss
grep -q '"findings"' "$tmp/out.kubewin" || { echo "run.sh: kubewin produced no report:" >&2; cat "$tmp/err.kubewin" >&2; exit 1; }
measure rg rg -F -c -f "$tmp/literals.txt" "$tmp/mix.log"
r_wall=$wall r_cpu=$cpu r_rss=$rss
measure engine "$tmp/engine" "$tmp/mix.log"
e_wall=$wall e_cpu=$cpu e_rss=$rss
measure version "$tmp/kubewin" version
v_rss=$rss

awk -v b="$bytes" -v ew="$e_wall" -v ec="$e_cpu" -v er="$e_rss" -v vr="$v_rss" -v kw="$k_wall" -v kc="$k_cpu" -v kr="$k_rss" -v rw="$r_wall" -v rc="$r_cpu" -v rr="$r_rss" \
	-v lits="$(wc -l <"$tmp/literals.txt")" -v rgcount="$(cat "$tmp/out.rg")" -v cpus="$(nproc)" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	mb = b / 1e6
	printf "input        %.0f MB klog mix, %d literals, %d CPUs, load average %s\n", mb, lits, cpus, load
	printf "kubewin      wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB\n", kw, kc, mb / kw, kr / 1024
	printf "ripgrep      wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (%s matching lines)\n", rw, rc, mb / rw, rr / 1024, rgcount
	printf "engine only  wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (bench/diagnose/engine)\n", ew, ec, mb / ew, er / 1024
	printf "cli baseline peak RSS %5.1f MiB  (kubewin version)\n", vr / 1024
	printf "ratio        %.2f x ripgrep throughput by wall time, %.2f x by CPU time (target >= 0.50): %s\n", rw / kw, rc / kc, (rw / kw >= 0.5 ? "ok" : "BELOW TARGET")
	printf "rss          kubewin %.1f MiB, engine %.1f MiB (target < 64 MiB): %s\n", kr / 1024, er / 1024, (kr / 1024 < 64 ? "ok" : (er / 1024 < 64 ? "engine ok, CLI baseline above" : "ABOVE TARGET"))
}'
