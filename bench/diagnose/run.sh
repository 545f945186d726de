#!/usr/bin/env bash
# Benchmark `kubewin diagnose` against ripgrep on the same input and literal set.
#
# Generates a deterministic klog mix (default 1 GiB) in a temporary directory that is removed on
# exit, warms the page cache, then runs RUNS times (default 1) each of:
#   kubewin diagnose -o json MIX          (full analysis: prefilter, regexp, parsing, grouping,
#                                          the source index; as shipped)
#   rg -F -c -f LITERALS MIX              (the catalogue's prefilter literals, count only)
#   rg -F -i -c -f LITERALS MIX           (the same literals in any case, as kubewin matches them)
#   bench/diagnose/engine -sources MIX    (the same scan behind a minimal main, the source index
#                                          loaded after the scan: diagnose.Options.LoadSources)
#   env GOMEMLIMIT=off kubewin diagnose   (diagnostic: without the CLI's 24 MiB soft limit)
#   kubewin version                       (the CLI binary's start-up memory baseline)
# and prints wall time, CPU time, throughput and peak RSS of each, the ratio of ripgrep's time to
# kubewin's by wall time and by CPU time, and the thread counts. With RUNS > 1 it ends with the
# median of each ratio. Targets (issue 23): kubewin's wall time ≤ ripgrep's (ratio ≥ 1.0, kubewin
# using its scan workers, ripgrep its one thread on one file), peak RSS < 64 MiB.
#
# Usage: bench/diagnose/run.sh [SIZE_IN_BYTES [RUNS]]
set -euo pipefail
cd "$(dirname "$0")/../.."

size=${1:-1073741824}
runs=${2:-1}
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

nproc=$(nproc)
workers=$((nproc < 4 ? nproc : 4))
: >"$tmp/ratios"
for run in $(seq "$runs"); do
	measure kubewin "$tmp/kubewin" diagnose -o json "$tmp/mix.log"
	k_wall=$wall k_cpu=$cpu k_rss=$rss
	grep -q '"findings"' "$tmp/out.kubewin" || { echo "run.sh: kubewin produced no report:" >&2; cat "$tmp/err.kubewin" >&2; exit 1; }
	measure rg rg -F -c -f "$tmp/literals.txt" "$tmp/mix.log"
	r_wall=$wall r_cpu=$cpu r_rss=$rss r_count=$(cat "$tmp/out.rg")
	measure rgi rg -F -i -c -f "$tmp/literals.txt" "$tmp/mix.log"
	i_wall=$wall i_cpu=$cpu i_rss=$rss i_count=$(cat "$tmp/out.rgi")
	measure engine "$tmp/engine" -sources "$tmp/mix.log"
	e_wall=$wall e_cpu=$cpu e_rss=$rss
	measure nolimit env GOMEMLIMIT=off "$tmp/kubewin" diagnose -o json "$tmp/mix.log"
	n_wall=$wall n_cpu=$cpu n_rss=$rss
	measure version "$tmp/kubewin" version
	v_rss=$rss

	awk -v b="$bytes" -v run="$run" -v runs="$runs" -v ew="$e_wall" -v ec="$e_cpu" -v er="$e_rss" -v vr="$v_rss" \
		-v kw="$k_wall" -v kc="$k_cpu" -v kr="$k_rss" -v rw="$r_wall" -v rc="$r_cpu" -v rr="$r_rss" \
		-v iw="$i_wall" -v ic="$i_cpu" -v ir="$i_rss" -v nw="$n_wall" -v nc="$n_cpu" -v nr="$n_rss" \
		-v lits="$(wc -l <"$tmp/literals.txt")" -v rgcount="$r_count" -v rgicount="$i_count" -v cpus="$nproc" -v workers="$workers" \
		-v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	mb = b / 1e6
	printf "run %d/%d\n", run, runs
	printf "input        %.0f MB klog mix, %d literals, %d CPUs, load average %s\n", mb, lits, cpus, load
	printf "threads      kubewin: %d scan workers (min(GOMAXPROCS, 4)) + reader + merger; ripgrep: 1 (one file is searched on one thread)\n", workers
	printf "kubewin      wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB\n", kw, kc, mb / kw, kr / 1024
	printf "ripgrep      wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (%s matching lines, case-sensitive)\n", rw, rc, mb / rw, rr / 1024, rgcount
	printf "ripgrep -i   wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (%s matching lines, any case)\n", iw, ic, mb / iw, ir / 1024, rgicount
	printf "engine only  wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (bench/diagnose/engine -sources)\n", ew, ec, mb / ew, er / 1024
	printf "no mem limit wall %6.2f s  cpu %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB  (kubewin, GOMEMLIMIT=off; diagnostic)\n", nw, nc, mb / nw, nr / 1024
	printf "cli baseline peak RSS %5.1f MiB  (kubewin version)\n", vr / 1024
	printf "ratio        %.2f x ripgrep by wall time, %.2f x by CPU time (ripgrep -i: %.2f x wall, %.2f x CPU); target >= 1.00 by wall: %s\n", rw / kw, rc / kc, iw / kw, ic / kc, (rw / kw >= 1.0 ? "ok" : "BELOW TARGET")
	printf "rss          kubewin %.1f MiB, engine %.1f MiB (target < 64 MiB): %s\n", kr / 1024, er / 1024, (kr / 1024 < 64 ? "ok" : (er / 1024 < 64 ? "engine ok, CLI above" : "ABOVE TARGET"))
	printf "%f %f %f %f\n", rw / kw, rc / kc, iw / kw, ic / kc >> "'"$tmp/ratios"'"
}'
done
if [ "$runs" -gt 1 ]; then
	for col in 1 2 3 4; do
		sort -n -k"$col","$col" "$tmp/ratios" | awk -v c="$col" -v n="$runs" 'NR == int((n + 1) / 2) { printf "%.2f ", $c }'
	done | awk '{ printf "median       %s x ripgrep by wall, %s x by CPU (ripgrep -i: %s x wall, %s x CPU) over the runs\n", $1, $2, $3, $4 }'
fi
