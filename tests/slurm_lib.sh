# A real Slurm cluster on this machine for the tests/slurm_*.sh tests: munged, slurmctld
# and four slurmd daemons in Slurm's multiple-slurmd mode (nodes n1..n4, one host,
# NodeAddr 127.0.0.1, a port each), every file under one temporary folder, run as root.
# Sourced after tests/lib.sh. `slurm_start` installs the Debian packages when missing
# (skips the test with the reason where they cannot be installed or started), writes
# slurm.conf and oci.conf, adds n1..n4 to /etc/hosts for the test's lifetime (the tasks
# resolve their node names) and starts the daemons; the EXIT trap stops them and puts
# /etc/hosts back. Client commands (srun, sbatch, scontrol, sinfo) find the cluster
# through SLURM_CONF, which slurm_start exports.
#
# Why these settings: proctrack/linuxproc and task/none need no cgroup set-up (the
# machine's cgroups belong to its own init); select/cons_tres with OverSubscribe=FORCE
# lets steps of one job share the 2 real cores; SlurmdParameters=config_overrides lets
# each node declare 4 CPUs on a 2-core machine, so `srun -N4 -n8` fits.

SLURM_NODES=(n1 n2 n3 n4)
skip() { echo "SKIPPED: $(basename "$0" .sh): $*"; exit 77; }

slurm_install() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && return 0
  [ "$(id -u)" = 0 ] || skip "Slurm is not installed and this test is not root (apt-get install slurm-wlm munge)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 ||
    skip "Slurm cannot be installed here (apt-get install slurm-wlm munge failed)"
}

slurm_write_conf() {  # DIR
  local d=$1 ctld_port node_ports=() n
  ctld_port=$(free_port)
  for n in "${SLURM_NODES[@]}"; do node_ports+=("$(free_port)"); done
  cat >"$d/slurm.conf" <<EOF
ClusterName=imgtooltest
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
ReturnToService=2
TaskProlog=$d/task_prolog
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=5
Waittime=0
EOF
  local i=0
  for n in "${SLURM_NODES[@]}"; do
    echo "NodeName=$n NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=${node_ports[$i]} CPUs=4 RealMemory=1000 State=UNKNOWN" >>"$d/slurm.conf"
    i=$((i + 1))
  done
  echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE" >>"$d/slurm.conf"
  # A node's own environment for its tasks (the TaskProlog's "export NAME=value" lines):
  # node-env/<node> holds NAME=value lines, so a test makes one node differ as a
  # misconfigured node would.
  mkdir -p "$d/node-env"
  cat >"$d/task_prolog" <<EOF
#!/bin/sh
f="$d/node-env/\$SLURMD_NODENAME"
[ -f "\$f" ] && sed 's/^/export /' "\$f"
exit 0
EOF
  chmod 0755 "$d/task_prolog"
  # Slurm's OCI container support (srun --container=BUNDLE): runc, through
  # examples/slurm/oci-run, which hands each task its node and node-local id (Slurm 22.05
  # gives a container step's tasks no SLURM_PROCID). Slurm's pattern tokens: %b bundle,
  # %n node, %u user, %j job, %s step, %t node-local task id.
  cat >"$d/oci.conf" <<EOF
RunTimeQuery="runc --root $d/runc state %n.%u.%j.%s.%t"
RunTimeRun="$REPO/examples/slurm/oci-run $d/runc %b %n %t %n.%u.%j.%s.%t"
RunTimeKill="runc --root $d/runc kill -a %n.%u.%j.%s.%t"
RunTimeDelete="runc --root $d/runc delete --force %n.%u.%j.%s.%t"
EOF
}

slurm_start_munge() {  # DIR
  local d=$1
  mkdir -p "$d/munge"
  chmod 0700 "$d/munge"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$d/munge/munge.key"
  munged --force --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" ||
    skip "munged does not start here (see $d/munge/munged.log)"
}

# Waits until every node is idle (slurmd registered), or fails after 30 s.
slurm_wait_idle() {
  local i
  for i in $(seq 150); do
    [ "$(sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$')" = "${#SLURM_NODES[@]}" ] && return 0
    sleep 0.2
  done
  sinfo -N >&2 || true
  tail -n 20 "$SLURM_DIR/slurmctld.log" >&2 || true
  fail "the Slurm nodes did not come up in 30 s"
}

slurm_stop() {
  [ -n "${SLURM_DIR:-}" ] || return 0
  local f
  for f in "$SLURM_DIR"/slurmd-*.pid "$SLURM_DIR/slurmctld.pid" "$SLURM_DIR/munge/munged.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.3
  for f in "$SLURM_DIR"/slurmd-*.pid "$SLURM_DIR/slurmctld.pid" "$SLURM_DIR/munge/munged.pid"; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  hosts_remove
  # Steps' runc containers, if a test failed mid-step.
  runc --root "$SLURM_DIR/runc" list -q 2>/dev/null | while read -r c; do
    runc --root "$SLURM_DIR/runc" delete --force "$c" 2>/dev/null || true
  done
}

slurm_start() {
  slurm_install
  command -v runc >/dev/null || apt-get install -y -q runc >/dev/null 2>&1 || true
  # Under $WORK (removed by lib.sh's cleanup), world-readable: slurmd reads it as root
  # but tasks may run as another user.
  SLURM_DIR=$WORK/slurm
  mkdir -p "$SLURM_DIR"
  chmod 0755 "$WORK" "$SLURM_DIR"
  mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/runc"
  for n in "${SLURM_NODES[@]}"; do mkdir -p "$SLURM_DIR/spool/$n"; done
  export SLURM_CONF=$SLURM_DIR/slurm.conf
  slurm_write_conf "$SLURM_DIR"
  # Also stops registry_lib.sh's registries when the test started one.
  trap 'slurm_stop; if declare -F stop_registries >/dev/null; then stop_registries; fi; cleanup' EXIT
  hosts_add "${SLURM_NODES[@]}" || skip "/etc/hosts is not writable: the node names cannot resolve"
  slurm_start_munge "$SLURM_DIR"
  slurmctld -i -f "$SLURM_CONF" || fail "slurmctld did not start (see $SLURM_DIR/slurmctld.log)"
  for n in "${SLURM_NODES[@]}"; do
    slurmd -f "$SLURM_CONF" -N "$n" || fail "slurmd -N $n did not start (see $SLURM_DIR/slurmd-$n.log)"
  done
  slurm_wait_idle
}
