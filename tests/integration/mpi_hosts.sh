#!/usr/bin/env bash
# `ringlab run --backend mpi --hosts A:2,B:2`: the controller hands the launch to OpenMPI's own
# mpirun, which starts host B's two ranks through its remote agent. Two hosts on one machine: the
# network namespaces of lib/netns.bash, joined by a veth pair. The controller runs in namespace A;
# OpenMPI's agent (OMPI_MCA_plm_rsh_agent, ssh by default) is a script that enters namespace B
# instead, with a host name of its own (OpenMPI tells nodes apart by host name: two nodes both
# called like this machine share their shared-memory segments' names and crash). The run must
# equal a plain local 4-rank run: per-epoch MSE within 1e-6, every rank's shards in the report.
#
# Where namespaces cannot be made (no CAP_NET_ADMIN; or RINGLAB_TEST_NO_NETNS=1), the hosts are
# 127.0.0.1 and localhost, both this machine: mpirun then starts all four ranks here without its
# agent, and the test says so. Nothing is sent anywhere but loopback and the two namespaces.
# The flags' errors are checked first, without running anything.
# Usage: mpi_hosts.sh <ringlab binary> <source dir>. Exit 77: MPI is not built in, or no mpirun.
set -uo pipefail
ringlab=$(realpath "$1")
source "$(dirname "$0")/lib/netns.bash"
work=$(mktemp -d)
cleanup() {
  netns_down
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. Bad placements: one line naming the flags, exit 2, before any process starts.
expect_error() {  # expected-text, args of `ringlab run`...
  local want=$1 msg rc
  shift
  msg=$(timeout 10 "$ringlab" run "$@" 2>&1)
  rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" <<< "$msg"; then ok "refused: $*: $msg"
  else bad "expected exit 2 and '$want' for $* (rc=$rc): $msg"; fi
}
expect_error "--world-size 3 but --hosts h1:2,h2:2 has 4 slots: give -n 4" --backend mpi --hosts h1:2,h2:2 -n 3
expect_error "--master-addr 127.0.0.1 is a loopback address, which the ranks on 10.231.0.2 cannot reach" \
  --backend mpi --hosts 10.231.0.2:2,10.231.0.3:2
expect_error "--master-addr 0.0.0.0 would have the ranks on 10.231.0.2 connect to themselves" \
  --backend mpi --hosts 10.231.0.2:2 --master-addr 0.0.0.0
expect_error "hands the launch to mpirun, which starts --backend mpi ranks, not gloo" --hosts h1:2,h2:2
expect_error "--hosts and --hostfile both name the hosts" --backend mpi --hosts h1:2 --hostfile "$work/none"
expect_error "slots must be in 1..64, got 0" --backend mpi --hosts h1:0
printf '# two hosts\nh1 slots=2\nh2\n' > "$work/hostfile"
expect_error "--hostfile $work/hostfile line 3: 'h2' has no slots=N" --backend mpi --hostfile "$work/hostfile"
printf 'h1 slots=2 max_slots=4  # the first\nh2 slots=2\n' > "$work/hostfile"
expect_error "--world-size 2 but --hostfile $work/hostfile has 4 slots" --backend mpi --hostfile "$work/hostfile" -n 2

# 2. The reference: the same job, four ranks on this machine, one plain mpirun.
reference=$(timeout 180 "$ringlab" run --backend mpi -n 4 -q --report "$work/local.json" 2>&1)
rc=$?
if grep -q "cannot run here" <<< "$reference"; then
  echo "SKIP: $(grep -o "backend 'mpi' cannot run here[^(]*" <<< "$reference")"
  exit 77
fi
if grep -q "needs mpirun" <<< "$reference"; then
  echo "SKIP: MPI is built in but mpirun is not on PATH"
  exit 77
fi
[ $rc -eq 0 ] || { echo "$reference"; bad "the local 4-rank MPI run exited $rc"; exit 1; }

# 3. Across two hosts.
agent_log="$work/agent.log"
if [ "${RINGLAB_TEST_NO_NETNS:-0}" != 1 ] && netns_up; then
  echo "hosts: namespaces $NETNS_A ($NETNS_ADDR_A) and $NETNS_B ($NETNS_ADDR_B), joined by a veth pair"
  # OpenMPI calls its agent as `agent [options] HOST COMMAND...`, COMMAND being one shell command
  # line (what ssh would hand the remote shell). Only host B is ever remote.
  cat > "$work/agent.sh" << EOF
#!/bin/bash
echo "\$*" >> "$agent_log"
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1
shift
if [ "\$host" != "$NETNS_ADDR_B" ]; then
  echo "agent: asked for host '\$host'; only $NETNS_ADDR_B is remote here" >&2
  exit 1
fi
exec ip netns exec "$NETNS_B" unshare --uts /bin/sh -c 'hostname ringlab-host-b && exec /bin/sh -c "\$0"' "\$*"
EOF
  chmod +x "$work/agent.sh"
  # OpenMPI's own connections (its daemons', and the ranks' TCP transport) over the veth only.
  run_hosts() {
    netns_exec A env OMPI_MCA_plm_rsh_agent="$work/agent.sh" OMPI_MCA_oob_tcp_if_include="$NETNS_SUBNET" \
      OMPI_MCA_btl_tcp_if_include="$NETNS_SUBNET" timeout 180 "$ringlab" run --backend mpi \
      --hosts "$NETNS_ADDR_A:2,$NETNS_ADDR_B:2" --master-addr "$NETNS_ADDR_A" "$@"
  }
  remote=1
else
  echo "hosts: no network namespaces here (${NETNS_ERROR:-RINGLAB_TEST_NO_NETNS=1}): falling back to loopback," \
    "--hosts 127.0.0.1:2,localhost:2, both this machine, so mpirun starts every rank here without its agent"
  run_hosts() { timeout 180 "$ringlab" run --backend mpi --hosts 127.0.0.1:2,localhost:2 "$@"; }
  remote=0
fi

out=$(run_hosts --report "$work/hosts.json" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then ok "the run across hosts exited 0"; else echo "$out"; bad "the run across hosts exited $rc"; fi
grep -qF "epoch 4 done, MSE over the whole dataset" <<< "$out" && ok "it printed every epoch" ||
  bad "no 'epoch 4 done' line in: $out"

if [ $rc -eq 0 ]; then
  /usr/bin/python3 - "$work/local.json" "$work/hosts.json" << 'PY' && ok "the same run as on one host: per-epoch MSE within 1e-6, 4 ranks' shards" || bad "the run across hosts differs from the local one"
import json, sys
local, hosts = (json.load(open(p)) for p in sys.argv[1:3])
assert len(hosts["epoch_mse"]) == 4, hosts["epoch_mse"]
for a, b in zip(local["epoch_mse"], hosts["epoch_mse"]):
    assert abs(a - b) <= 1e-6, (local["epoch_mse"], hosts["epoch_mse"])
print("  per-epoch MSE, local:", local["epoch_mse"])
print("  per-epoch MSE, hosts:", hosts["epoch_mse"])
assert len(hosts["shards"]) == 4, len(hosts["shards"])
for epoch in range(4):
    seen = sorted(i for rank in hosts["shards"] for i in rank[epoch])
    assert seen == list(range(256)), epoch
assert hosts["shards"] == local["shards"]
assert hosts["allreduce_demo"]["output"] == [4.0, 8.0, 12.0]
# The report names how mpirun set OpenMPI up (docs/launchers.md): one host may use the single
# copy where this machine allows it; across hosts always the copies through shared memory.
mech = "OMPI_MCA_btl_vader_single_copy_mechanism"
assert local["mpi_settings"]["OMPI_MCA_plm"] == "isolated", local["mpi_settings"]
assert local["mpi_settings"][mech] in ("cma", "none"), local["mpi_settings"]
assert hosts["mpi_settings"][mech] == "none", hosts["mpi_settings"]
assert "OMPI_MCA_plm" not in hosts["mpi_settings"], hosts["mpi_settings"]
print("  OpenMPI single copy, one host:", local["mpi_settings"][mech], "; across hosts:", hosts["mpi_settings"][mech])
PY
fi

if [ $remote = 1 ]; then
  calls=$(wc -l < "$agent_log" 2> /dev/null || echo 0)
  hosts_asked=$(awk '{ for (i = 1; i <= NF; i++) if ($i !~ /^-/) { print $i; break } }' "$agent_log" 2> /dev/null | sort -u)
  if [ "$calls" -eq 1 ] && [ "$hosts_asked" = "$NETNS_ADDR_B" ]; then
    ok "mpirun went through its remote agent once, for host $NETNS_ADDR_B (namespace $NETNS_B)"
  else bad "the agent was called $calls time(s), for '$hosts_asked'"; fi
  # The run's token (32 hex digits) travels in the environment, never on a command line.
  if grep -qE '[0-9a-f]{32}' "$agent_log"; then bad "a token-like value on the agent's command line"
  else ok "no token on the remote command line"; fi
  if [ -z "$(ip netns pids "$NETNS_B" 2> /dev/null)" ]; then ok "nothing left running in $NETNS_B"
  else bad "processes left in $NETNS_B: $(ip netns pids "$NETNS_B" | tr '\n' ' ')"; fi
fi

[ $fail -eq 0 ] && echo PASS || echo FAILED
exit $fail
