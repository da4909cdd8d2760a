# Two "hosts" on one machine, for tests that need ranks on different machines: two network
# namespaces joined by a veth pair. Sourced, not run (ctest runs only tests/integration/*.sh).
#
#   netns_up           creates both; on success sets
#                        NETNS_A, NETNS_B            the namespaces' names (unique to this run)
#                        NETNS_ADDR_A, NETNS_ADDR_B  their addresses, 10.231.N.1 and 10.231.N.2
#                        NETNS_SUBNET                10.231.N.0/24, e.g. for OpenMPI's *_if_include
#                      and returns 0; on failure it removes what it made, sets NETNS_ERROR to the
#                      reason (no `ip`, no CAP_NET_ADMIN, ...) and returns 1, so that the caller
#                      can fall back to loopback and say why.
#   netns_exec A|B CMD...  runs CMD inside namespace A or B (with this script's environment).
#   netns_down         ends the processes still inside the namespaces and deletes them (and the
#                      veth pair with them). Safe to call twice, and from an EXIT trap before or
#                      after netns_up.
#
# The addresses exist only inside the two namespaces, which see nothing but each other and their
# own loopback: nothing a test sends there can leave the machine. The subnet's third number comes
# from this shell's pid, so the logs of two runs side by side can be told apart (their namespaces
# are separate in any case, so equal addresses could not collide).

NETNS_A="" NETNS_B="" NETNS_ADDR_A="" NETNS_ADDR_B="" NETNS_SUBNET="" NETNS_ERROR=""
_netns_veth_a="" _netns_veth_b=""

netns_up() {
  local tag=$$ net=$(( $$ % 250 + 1 ))
  NETNS_ERROR=""
  if ! command -v ip > /dev/null; then
    NETNS_ERROR="the ip command (iproute2) is not installed"
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    NETNS_ERROR="creating network namespaces needs root (CAP_NET_ADMIN); running as $(id -un)"
    return 1
  fi
  # Interface names have at most 15 characters: "rlva" and a pid of at most 7 digits fit.
  NETNS_A="ringlab-a-$tag" NETNS_B="ringlab-b-$tag"
  _netns_veth_a="rlva$tag" _netns_veth_b="rlvb$tag"
  NETNS_SUBNET="10.231.$net.0/24" NETNS_ADDR_A="10.231.$net.1" NETNS_ADDR_B="10.231.$net.2"
  local err
  if ! err=$(_netns_create 2>&1); then
    NETNS_ERROR="cannot create network namespaces here: ${err:-ip failed without a message}"
    netns_down
    return 1
  fi
  return 0
}

_netns_create() {
  set -e
  ip netns add "$NETNS_A"
  ip netns add "$NETNS_B"
  ip link add "$_netns_veth_a" type veth peer name "$_netns_veth_b"
  ip link set "$_netns_veth_a" netns "$NETNS_A"
  ip link set "$_netns_veth_b" netns "$NETNS_B"
  ip -n "$NETNS_A" addr add "$NETNS_ADDR_A/24" dev "$_netns_veth_a"
  ip -n "$NETNS_B" addr add "$NETNS_ADDR_B/24" dev "$_netns_veth_b"
  local ns
  for ns in "$NETNS_A" "$NETNS_B"; do ip -n "$ns" link set lo up; done
  ip -n "$NETNS_A" link set "$_netns_veth_a" up
  ip -n "$NETNS_B" link set "$_netns_veth_b" up
}

netns_exec() {
  local which=$1; shift
  case $which in
    A) ip netns exec "$NETNS_A" "$@" ;;
    B) ip netns exec "$NETNS_B" "$@" ;;
    *) echo "netns_exec: expected A or B, got '$which'" >&2; return 2 ;;
  esac
}

# A namespace is kept alive by the processes inside it even after its name is deleted, so they
# are ended first: SIGTERM, then SIGKILL for any still there after 2 s. Only processes inside
# this run's own namespaces are signalled, each by its pid.
netns_down() {
  local ns pid waited
  for ns in "$NETNS_A" "$NETNS_B"; do
    [ -n "$ns" ] && ip netns list 2> /dev/null | awk '{print $1}' | grep -qxF "$ns" || continue
    for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -TERM "$pid" 2> /dev/null; done
    for waited in $(seq 20); do
      [ -z "$(ip netns pids "$ns" 2> /dev/null)" ] && break
      sleep 0.1
    done
    for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -KILL "$pid" 2> /dev/null; done
    ip netns del "$ns" 2> /dev/null
  done
  # A veth end that never made it into a namespace (netns_up failed half way) is in ours.
  [ -n "$_netns_veth_a" ] && ip link del "$_netns_veth_a" 2> /dev/null
  return 0
}
