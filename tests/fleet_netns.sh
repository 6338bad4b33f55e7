#!/usr/bin/env bash
# imgtool fleet check across "hosts": each worker in its own network namespace with its
# own address, joined by a bridge in a "switch" namespace (veth pairs between it and each
# worker). Everything is created by this test and removed on exit; the host's own
# interfaces and routes are never touched (the veths are created inside the switch
# namespace, and the addresses, 10.213.7.0/24, exist only inside our namespaces).
# 3 identical workers pass (the chief binds its own address, not loopback, and the others
# reach it over the bridge); worker 2 with NCCL_ALGO=Tree is named by all three; a worker
# whose link to the switch is down is reported missing with its address, and itself
# names the chief it cannot reach.
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN): otherwise exit 77 with the reason.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
command -v ip >/dev/null || { echo "SKIP: no ip(8) (iproute2) on this machine"; exit 77; }

NS="imgtool-fleet-$$"
N=3
NAMESPACES=()
PIDS=()
teardown() {
  local p ns
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  # Deleting the switch namespace deletes the bridge and every veth pair with it.
  for ns in "${NAMESPACES[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
  cleanup
}
trap teardown EXIT

if ! err=$(ip netns add "$NS-sw" 2>&1); then
  echo "SKIP: cannot create a network namespace here (ip netns add: $err); this test needs root"
  exit 77
fi
NAMESPACES+=("$NS-sw")
ip -n "$NS-sw" link add br0 type bridge
ip -n "$NS-sw" link set br0 up
ADDRS=()
for i in $(seq 0 $((N - 1))); do
  ip netns add "$NS-$i"
  NAMESPACES+=("$NS-$i")
  # The pair is born in the switch namespace; one end moves into the worker's.
  ip -n "$NS-sw" link add "v$i" type veth peer name eth0 netns "$NS-$i"
  ip -n "$NS-sw" link set "v$i" master br0
  ip -n "$NS-sw" link set "v$i" up
  ip -n "$NS-$i" addr add "10.213.7.$((i + 1))/24" dev eth0
  ip -n "$NS-$i" link set eth0 up
  ip -n "$NS-$i" link set lo up
  ADDRS+=("10.213.7.$((i + 1)):2222")  # the same port on every host, as in a real cluster
done
# Each worker sees only its own address and the bridge: no 127.0.0.1 path to the others.
for i in $(seq 0 $((N - 1))); do
  assert_eq "$(ip -n "$NS-$i" -o -4 addr show dev eth0 | awk '{print $4}')" "10.213.7.$((i + 1))/24" "$NS-$i's address"
done
pass "namespaces $NS-{sw,0..$((N - 1))}: bridge br0, workers at ${ADDRS[*]}"

warm_probe

# netns_fleet CASE ARGS...: worker i runs in $NS-i with TF_CONFIG over ADDRS (worker 0 is
# the chief); XENV[i] adds environment, as run_fleet does.
netns_fleet() {
  local case=$1 i
  shift
  local -a xe
  PIDS=()
  for i in $(seq 0 $((N - 1))); do
    xe=()
    [ -n "${XENV[$i]:-}" ] && read -ra xe <<<"${XENV[$i]}"
    (
      rc=0
      ip netns exec "$NS-$i" env "${xe[@]}" TF_CONFIG="$(tf_config none "$i" "${ADDRS[@]}")" \
        timeout 120 "$IMGTOOL" fleet check "$@" >"$WORK/$case.$i.out" 2>"$WORK/$case.$i.err" || rc=$?
      echo $rc >"$WORK/$case.$i.rc"
    ) &
    PIDS+=($!)
  done
  for i in "${PIDS[@]}"; do wait "$i"; done
  PIDS=()
  XENV=()
}

netns_fleet same --timeout 30
FLEET_SKIP=""
all_exit same $N 0
all_say same $N "3 of 3" OK
pass "3 identical workers in 3 namespaces: all exit 0 and print OK"

XENV[2]="NCCL_ALGO=Tree"
netns_fleet algo --timeout 30
all_exit algo $N 1
all_say algo $N env.NCCL_ALGO Tree "worker 2" FAILED
pass "worker 2 (10.213.7.3) with NCCL_ALGO=Tree: all 3 exit 1 naming env.NCCL_ALGO and worker 2"

# Worker 1's host drops off the network (its cable, the veth, is down) but it still runs:
# it cannot reach the chief and says so; the others report it missing, with its address.
ip -n "$NS-sw" link set v1 down
netns_fleet cut --timeout 3
FLEET_SKIP="1"
all_exit cut $N 3
all_say cut $N "2 of 3" "worker 1" "${ADDRS[1]}"
FLEET_SKIP=""
rc=$(cat "$WORK/cut.1.rc")
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "cut: worker 1 exited $rc: $(output_of cut 1)"
assert_contains "$(output_of cut 1)" "${ADDRS[0]}" "cut: worker 1 names the chief's address"
pass "worker 1's link down: workers 0 and 2 exit 3 naming worker 1 (${ADDRS[1]}); worker 1 exits $rc naming the chief (${ADDRS[0]})"
