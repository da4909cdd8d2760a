#!/usr/bin/env bash
# mpirun across two "hosts" that share this machine's cores: OpenMPI busy-polls while a host's
# ranks fit its slots, and two such hosts on one machine spin against each other. The seed's job
# at 2 x 2 ranks (`--hosts A:2,B:2`, the two network namespaces of tests/integration/lib/netns.bash,
# OpenMPI's agent entering the second with a host name of its own, as tests/integration/mpi_hosts.sh
# does), µs per step from the report, with and without OMPI_MCA_mpi_yield_when_idle=1, in turns.
#
#   bench/mpi_hosts_yield.sh [path/to/ringlab] [rounds]      (as root: it makes namespaces)
set -uo pipefail
ringlab=$(realpath "${1:-build/app/ringlab}")
rounds=${2:-3}
source "$(dirname "$0")/../tests/integration/lib/netns.bash"
work=$(mktemp -d)
trap 'netns_down; rm -rf "$work"' EXIT
netns_up || { echo "no network namespaces here: $NETNS_ERROR" >&2; exit 77; }
cat > "$work/agent.sh" << AGENT
#!/bin/bash
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
shift
exec ip netns exec "$NETNS_B" unshare --uts /bin/sh -c 'hostname ringlab-host-b && exec /bin/sh -c "\$0"' "\$*"
AGENT
chmod +x "$work/agent.sh"
step_us() {  # extra environment...
  netns_exec A env "$@" OMPI_MCA_plm_rsh_agent="$work/agent.sh" OMPI_MCA_oob_tcp_if_include="$NETNS_SUBNET" \
    OMPI_MCA_btl_tcp_if_include="$NETNS_SUBNET" timeout 300 "$ringlab" run --backend mpi -q \
    --hosts "$NETNS_ADDR_A:2,$NETNS_ADDR_B:2" --master-addr "$NETNS_ADDR_A" --epochs 20 --report "$work/r.json" ||
    { echo "the run failed" >&2; exit 1; }
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["us_per_step"]))' "$work/r.json"
}
echo "# bench/mpi_hosts_yield.sh: seed job, 20 epochs, 2 x 2 ranks over mpirun --hosts, two namespaces of one machine"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  spin=$(step_us OMPI_MCA_mpi_yield_when_idle=0)
  yield=$(step_us OMPI_MCA_mpi_yield_when_idle=1)
  echo "round $round: busy-polling $spin µs per step, yield_when_idle=1 $yield µs per step ($(python3 -c "print(f'{$spin/$yield:.1f}')")x)"
done
