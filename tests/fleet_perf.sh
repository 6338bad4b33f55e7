#!/usr/bin/env bash
# imgtool fleet check --perf with 4 worker processes on 127.0.0.1 (one host: they take
# turns for the GEMM), all from one `imgtool probe -o` fingerprint:
#   (a) 5 runs of an unslowed fleet: every worker exits 0, every report has a figure for
#       every worker and flags nobody;
#   (b) worker 2 slowed on purpose: put in a cgroup (v1 cpu controller) whose CFS quota is
#       5% of one CPU (1 ms per 20 ms period, so every GEMM repetition spans many
#       periods; 5%, not 10%: on a loaded machine the others' GEMM slows too (to ~35% of
#       a core with two compiles beside it, which put a 10% worker at 40% of the median),
#       and the ratio must stay clear of the threshold): every worker exits 7 and names worker 2
#       (rank 2), its gemm figure and "below 30%", and no other worker; the slowed
#       worker's ratio is printed;
#   (c) the same with --perf-warn: exit 0, the flag still reported.
# The threshold is 0.3, not the default 0.5: this machine's 2 cores are shared, and another
# job's compile can hold half a core through one worker's whole 0.2 s GEMM turn (clean
# runs have shown a worker at 0.49 of the median); the slowed worker is at 5-20%.
# Without a writable cgroup v1 cpu controller the slowing is two busy loops pinned with
# taskset to the core worker 2 is pinned to (it then gets about a third of that core).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
N=4

"$IMGTOOL" probe -o "$WORK/fp.json" >/dev/null 2>"$WORK/probe.err" || fail "imgtool probe: $(cat "$WORK/probe.err")"

# Every worker's PERF table: a median row and a row per worker, each with two figures.
has_figures() {  # CASE
  local i w
  for i in $(started $N); do
    grep -qE '^median +[0-9.]+ +[0-9.]+$' "$WORK/$1.$i.out" || fail "$1: task $i has no median row: $(output_of "$1" "$i")"
    for w in 0 1 2 3; do
      grep -qE "^worker $w +[0-9.]+ +[0-9.]+\$" "$WORK/$1.$i.out" ||
        fail "$1: task $i has no figures for worker $w: $(output_of "$1" "$i")"
    done
  done
}

# ---- (a) unslowed, 5 times ----
for run in 1 2 3 4 5; do
  run_fleet clean$run $N --timeout 60 --perf --perf-threshold 0.3 --fingerprint "$WORK/fp.json"
  all_exit clean$run $N 0
  all_say clean$run $N "4 of 4 workers match" PERF OK
  none_say clean$run $N "below"
  has_figures clean$run
  same_stdout clean$run $N
done
# The lowest ratio to the median seen in the clean runs: the margin below the threshold.
lowest=$(for run in 1 2 3 4 5; do
  awk '$1 == "median" {m2 = $2; m3 = $3} $1 == "worker" {print $3 / m2; print $4 / m3}' "$WORK/clean$run.0.out"
done | sort -g | head -1)
gemm=$(awk '$1 == "median" {print $2}' "$WORK/clean5.0.out")
busbw=$(awk '$1 == "median" {print $3}' "$WORK/clean5.0.out")
pass "5 unslowed runs of 4 workers: all exit 0, nobody flagged (lowest figure $lowest of its median; last run's medians: gemm $gemm GFLOP/s, allreduce busbw $busbw GB/s)"

# ---- (b) worker 2 slowed ----
CG=""
BUSY=()
slow_cleanup() {
  local p
  for p in "${BUSY[@]}"; do stop_pid "$p"; done
  if [ -n "$CG" ] && [ -d "$CG" ]; then
    # Every process in it has exited by now; move any straggler out, then remove it.
    while read -r p; do echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null || true; done <"$CG/cgroup.procs"
    rmdir "$CG" 2>/dev/null || true
  fi
  cleanup
}
trap slow_cleanup EXIT

# The slowed worker's imgtool runs through this wrapper (run_fleet's XBIN).
if [ -w /sys/fs/cgroup/cpu/cgroup.procs ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  CG=/sys/fs/cgroup/cpu/imgtool-fleet-perf-$$
  mkdir "$CG"
  echo 20000 >"$CG/cpu.cfs_period_us"
  echo 1000 >"$CG/cpu.cfs_quota_us"
  printf '#!/usr/bin/env bash\necho $$ >"%s/cgroup.procs"\nexec "%s" "$@"\n' "$CG" "$IMGTOOL" >"$WORK/slowed.sh"
  HOW="a cgroup with cpu.cfs_quota_us 1000 of 20000 (5% of a CPU)"
else
  for _ in 1 2; do
    taskset -c 0 bash -c 'while :; do :; done' &
    BUSY+=($!)
  done
  printf '#!/usr/bin/env bash\nexec taskset -c 0 "%s" "$@"\n' "$IMGTOOL" >"$WORK/slowed.sh"
  HOW="two busy loops pinned to its core"
fi
chmod +x "$WORK/slowed.sh"

XBIN[2]="$WORK/slowed.sh"
run_fleet slow $N --timeout 60 --perf --perf-threshold 0.3 --fingerprint "$WORK/fp.json"
all_exit slow $N 7
all_say slow $N "SLOW: worker 2 (gemm)" "worker 2 (rank 2): gemm" "of the median" "below 30%" "FAILED (exit 7)"
same_stdout slow $N
for w in 0 1 3; do none_say slow $N "worker $w (rank $w)"; done
line=$(grep -F "worker 2 (rank 2): gemm" "$WORK/slow.0.out")
ratio=$(sed -E 's/.*, ([0-9]+)% of the median.*/\1/' <<<"$line")
pass "worker 2 slowed by $HOW: all 4 exit 7 naming worker 2 (rank 2) only: $line"

# ---- (c) the same with --perf-warn: reported, not failed ----
run_fleet warn $N --timeout 60 --perf --perf-threshold 0.3 --perf-warn --fingerprint "$WORK/fp.json"
all_exit warn $N 0
all_say warn $N "perf warning: worker 2 (gemm)" "worker 2 (rank 2): gemm" "(--perf-warn)" OK
pass "--perf-warn: the slowed worker is reported (worker 2 at ${ratio}% of the median in (b)), every worker exits 0"
unset 'XBIN[2]'
