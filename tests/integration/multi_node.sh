#!/usr/bin/env bash
# Two nodes, launched as torchrun users launch them: node 0 with --nnodes 2 --nproc-per-node 2
# --join-file, node 1 with --join-file --node-rank 1. Checked:
#   - on two "hosts" (network namespaces joined by a veth pair, when this machine lets the test
#     make them; else two controllers on loopback, said so): node 0's report holds all 4 ranks
#     and equals PyTorch's world-size-4 golden (shards exact, per-epoch MSE within 1e-5);
#   - the same on loopback, with the token in RINGLAB_TOKEN instead of a join file;
#   - SIGKILL of a worker on node 1: both nodes end (well before the run's 300 s timeout), and
#     both name that rank;
#   - no process of the run has the token on its command line;
#   - a whole node lost (its controller killed); Ctrl-Z on node 1's controller for 7 s: node 0
#     waits for it instead (the run goes on), and a Ctrl-C on node 0 then ends it as asked;
#   - hostile rows: a wrong token, no token, a mismatched --nnodes, two nodes claiming one node
#     rank, a node that never comes: each a clear error naming it, within the timeout.
set -uo pipefail
ringlab=$(realpath "$1")
src=$2
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: $py is needed to compare the JSON files"; exit 77; }
# shellcheck source=lib/netns.bash
. "$src/tests/integration/lib/netns.bash"
work=$(mktemp -d)
trap 'netns_down; rm -rf "$work"' EXIT
chmod 700 "$work"
golden=$src/tests/parity/golden/seed-ws4.json
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# A port for node 0's store: ringlab's own picker is not reachable from here, so take one from the
# kernel (bind to 0) and hope it stays free for the second it takes to start node 0.
free_port() { $py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run_pair LABEL IN_A IN_B ADDR [extra flags for both...]: node 0 (in IN_A) then node 1 (in IN_B).
# IN_A/IN_B are command prefixes ("" or "netns_exec A"). Leaves $work/LABEL.{0,1}.{out,err,rc}.
run_pair() {
  local label=$1 in_a=$2 in_b=$3 addr=$4; shift 4
  local port; port=$(free_port)
  rm -f "$work/$label.join"
  ( $in_a "$ringlab" run --nnodes 2 --nproc-per-node 2 --node-rank 0 --master-addr "$addr" --master-port "$port" \
      --join-file "$work/$label.join" --report "$work/$label.json" "$@" \
      > "$work/$label.0.out" 2> "$work/$label.0.err"; echo $? > "$work/$label.0.rc" ) &
  local node0=$! i
  for i in $(seq 100); do [ -f "$work/$label.join" ] && break; sleep 0.1; done
  ( $in_b "$ringlab" run --join-file "$work/$label.join" --node-rank 1 "$@" \
      > "$work/$label.1.out" 2> "$work/$label.1.err"; echo $? > "$work/$label.1.rc" ) &
  local node1=$!
  echo "$node0 $node1" > "$work/$label.pids"
}

wait_pair() {
  local label=$1 pids; read -r -a pids < "$work/$label.pids"
  wait "${pids[@]}"
}

check_golden() {  # LABEL
  local label=$1
  wait_pair "$label"
  if [ "$(cat "$work/$label.0.rc")" != 0 ] || [ "$(cat "$work/$label.1.rc")" != 0 ]; then
    fail "$label: node 0 exit $(cat "$work/$label.0.rc"), node 1 exit $(cat "$work/$label.1.rc")"
    sed 's/^/     node 0: /' "$work/$label.0.err" | tail -5; sed 's/^/     node 1: /' "$work/$label.1.err" | tail -5
    return
  fi
  if $py "$src/tests/parity/compare.py" "$work/$label.json" "$golden" 1e-5 > "$work/cmp"; then
    ok "$label: node 0's report of 2 nodes x 2 ranks equals PyTorch's world-size-4 golden"
  else
    fail "$label: node 0's report differs from the golden"; sed 's/^/     /' "$work/cmp"
  fi
  $py - "$work/$label.json" <<'EOF' || fail "$label: the report does not place 4 ranks on 2 nodes"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["shards"]) == 4 and all(len(epochs) == 4 for epochs in r["shards"]), "not 4 ranks x 4 epochs of shards"
assert len(r["step_loss"]) == 4, "not 4 ranks of step losses"
assert r.get("ranks_per_node") == [2, 2], r.get("ranks_per_node")
EOF
  grep -q "^ringlab run: node 1 of 2: ranks 2 to 3 ended well; node 0 prints the run's report$" "$work/$label.1.err" &&
    [ ! -s "$work/$label.1.out" ] && ok "$label: node 1 says which ranks it ran, on stderr as all it says" \
    || fail "$label: node 1 printed: $(cat "$work/$label.1.out" "$work/$label.1.err")"
}

# ---- Two hosts: network namespaces, else loopback --------------------------------------------
if netns_up; then
  where="two network namespaces ($NETNS_ADDR_A, $NETNS_ADDR_B)"
  in_a="netns_exec A" in_b="netns_exec B" addr=$NETNS_ADDR_A
else
  where="loopback (no namespaces: $NETNS_ERROR)"
  echo "note: two hosts fall back to two controllers on loopback: $NETNS_ERROR"
  in_a="" in_b="" addr=127.0.0.1
fi
run_pair hosts "$in_a" "$in_b" "$addr"
check_golden hosts
echo "     (on $where)"

# ---- Loopback, the token in RINGLAB_TOKEN ---------------------------------------------------
port=$(free_port) token=$($py -c 'import secrets; print(secrets.token_hex(16))')
RINGLAB_TOKEN=$token "$ringlab" run --nnodes 2 --nproc-per-node 2 --node-rank 0 --master-port "$port" -q \
  --report "$work/env.json" > "$work/env.0.out" 2> "$work/env.0.err" &
env0=$!
RINGLAB_TOKEN=$token "$ringlab" run --nnodes 2 --nproc-per-node 2 --node-rank 1 --master-port "$port" -q \
  > "$work/env.1.out" 2> "$work/env.1.err"
rc1=$?
wait $env0; rc0=$?
if [ $rc0 = 0 ] && [ $rc1 = 0 ] && $py "$src/tests/parity/compare.py" "$work/env.json" "$golden" 1e-5 > "$work/cmp"; then
  ok "loopback, RINGLAB_TOKEN on both nodes: equals the golden"
else
  fail "loopback with RINGLAB_TOKEN: exits $rc0/$rc1"; tail -3 "$work/env.0.err" "$work/env.1.err" "$work/cmp"
fi

# ---- SIGKILL of a worker on node 1; no token on any command line ----------------------------
run_pair kill "$in_a" "$in_b" "$addr" -q --samples 400000 --epochs 100 --trace-level none --timeout 300
token=""
for i in $(seq 100); do [ -f "$work/kill.join" ] && break; sleep 0.1; done
token=$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$work/kill.join" 2>/dev/null)
victim=""
for i in $(seq 300); do
  for pid in $(pgrep -f "ringlab worker" || true); do
    env=$(tr '\0' '\n' < /proc/$pid/environ 2>/dev/null) || continue
    grep -qx "RINGLAB_TOKEN=$token" <<< "$env" && grep -qx "RANK=3" <<< "$env" && victim=$pid
  done
  [ -n "$victim" ] && break; sleep 0.1
done
if [ -z "$token" ] || [ -z "$victim" ]; then
  fail "kill: node 1's rank 3 never appeared"
else
  sleep 1
  # The token comes in through the environment, so the scan's own command line does not hold it.
  leaked=$(TOKEN=$token $py -c '
import glob, os
for path in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        if os.environ["TOKEN"].encode() in open(path, "rb").read(): print(path, open(path, "rb").read().replace(b"\0", b" ").decode(errors="replace"))
    except OSError:
        pass')
  [ -z "$leaked" ] && ok "no process has the run's token on its command line" \
    || fail "the token is on the command line of: $leaked"
  t0=$(date +%s)
  kill -9 "$victim"
  wait_pair kill
  took=$(( $(date +%s) - t0 ))
  for node in 0 1; do
    if [ "$(cat "$work/kill.$node.rc")" != 0 ] && grep -q "rank 3 (node 1) failed: killed by SIGKILL" "$work/kill.$node.err"; then
      ok "kill: node $node ended (exit $(cat "$work/kill.$node.rc")) naming rank 3 on node 1"
    else
      fail "kill: node $node exit $(cat "$work/kill.$node.rc"): $(head -3 "$work/kill.$node.err")"
    fi
  done
  # The run's timeout is 300 s: ending within 60 s shows the nodes were told, not timed out.
  [ "$took" -lt 60 ] && ok "kill: both nodes ended ${took} s after the kill (timeout 300 s)" \
    || fail "kill: the nodes took ${took} s to end (the timeout is 300 s)"
fi
netns_down

# ---- Hostile rows (loopback) -------------------------------------------------------------------
expect() {  # LABEL FILE PATTERN RC
  if [ "$4" != 0 ] && grep -q -- "$3" "$2"; then ok "$1"; else fail "$1 (exit $4): $(head -3 "$2")"; fi
}
node0_bg() {  # PORT TIMEOUT JOINFILE: node 0 in the background, its pid in $bg
  "$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 0 --master-port "$1" --timeout "$2" -q \
    --join-file "$3" > /dev/null 2> "$3.err" &
  bg=$!
  for i in $(seq 100); do [ -f "$3" ] && break; sleep 0.1; done
  cp -p "$3" "$3.copy"  # node 0 removes its join file when its run ends
}
# NNODES NAME [NODE 0'S FLAGS...]: node 0 of NNODES (one rank each) and node 1 in the background,
# node 1 joining through $work/NAME.join; their pids in $node0 and $node1, their stderr in
# $work/NAME.0.err and $work/NAME.1.err.
nodes_0_and_1_bg() {
  local nnodes=$1 name=$2
  shift 2
  "$ringlab" run --nnodes "$nnodes" --nproc-per-node 1 --node-rank 0 --master-port "$(free_port)" "$@" \
    --join-file "$work/$name.join" > /dev/null 2> "$work/$name.0.err" &
  node0=$!
  for i in $(seq 100); do [ -f "$work/$name.join" ] && break; sleep 0.1; done
  "$ringlab" run --join-file "$work/$name.join" --node-rank 1 > /dev/null 2> "$work/$name.1.err" &
  node1=$!
}
token_of() { $py -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$1"; }

port=$(free_port); node0_bg "$port" 8 "$work/wrong.join"
RINGLAB_TOKEN=not-the-token "$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 1 --master-port "$port" -q \
  > /dev/null 2> "$work/wrong.err"
expect "wrong token: node 1 is refused at once" "$work/wrong.err" "refused the token" $?
# Node 0 says so while it still waits for the others (it said nothing until its --timeout ran out).
said_while_waiting=no
for i in $(seq 50); do
  grep -q "a node was refused, its token not this run's" "$work/wrong.join.err" && { kill -0 $bg 2> /dev/null && said_while_waiting=yes; break; }
  sleep 0.1
done
[ $said_while_waiting = yes ] && ok "wrong token: node 0 says a node was refused while it waits on" ||
  fail "wrong token: node 0 said nothing while waiting: $(head -2 "$work/wrong.join.err")"
wait $bg
expect "wrong token: node 0 names node 1 and the refused connection" "$work/wrong.join.err" \
  "node 1 never joined within 8 s (a node reached the store with a token not this run's, refused as below); node 0's store refused: .*wrong token" $?
# Reached with the wrong token, the store's address is not the question it asks.
! grep -q "was it started with this store's address" "$work/wrong.join.err" &&
  ok "wrong token: node 0 does not ask whether node 1 had its address" || fail "wrong token: node 0 asked about the address"

env -u RINGLAB_TOKEN "$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 1 --master-port "$port" -q \
  > /dev/null 2> "$work/none.err"
expect "missing token: refused before anything starts" "$work/none.err" "node 1 joins node 0's run with node 0's token" $?

# A wrong --master-port on node 1 that reaches another program: one that answers with its own
# bytes (an SSH server's banner) is named at once; one that takes the connection and says nothing
# (an HTTP server waiting for its request line) is named as such at the timeout, not as a store
# that is down. Both listen on loopback, started here and stopped here.
cat > "$work/foreign.py" << 'PY'
import socket, sys, time
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen(8)
server.settimeout(30)
held = []
try:
    while True:
        conn, _ = server.accept()
        if sys.argv[2] == "banner":
            conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
        held.append(conn)  # silent: the connection stays open, unanswered
except socket.timeout:
    pass
PY
# foreign_row MODE TIMEOUT LABEL PATTERN: node 1 sent to a port where foreign.py listens in MODE.
foreign_row() {
  local port foreign
  port=$(free_port)
  $py "$work/foreign.py" "$port" "$1" & foreign=$!
  sleep 0.5
  RINGLAB_TOKEN=t timeout 30 "$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 1 --master-port "$port" \
    --timeout "$2" -q > /dev/null 2> "$work/$1.err"
  expect "$3" "$work/$1.err" "${4//PORT/$port}" $?
  kill $foreign 2> /dev/null; wait $foreign 2> /dev/null
}
foreign_row banner 20 "node 1 at a port another program answers: not a ringlab store, said at once" \
  "127.0.0.1:PORT is not a ringlab store: it answered the store's hello with bytes a store never sends"
foreign_row silent 3 "node 1 at a port that takes the connection and says nothing: named as such" \
  "cannot join node 0's run within 3 s: 127.0.0.1:PORT takes the connection but does not answer the store's hello"

port=$(free_port); node0_bg "$port" 8 "$work/nn.join"
RINGLAB_TOKEN=$(token_of "$work/nn.join") "$ringlab" run --nnodes 3 --nproc-per-node 1 --node-rank 1 \
  --master-port "$port" -q > /dev/null 2> "$work/nn.err"
expect "mismatched --nnodes: node 1 says what differs" "$work/nn.err" "given --nnodes 3 but node 0 runs --nnodes 2" $?
wait $bg
expect "mismatched --nnodes: node 0 says node 1 refused and why" "$work/nn.join.err" "node 1 refused to join: this node was given --nnodes 3" $?

port=$(free_port); node0_bg "$port" 20 "$work/dup.join"
"$ringlab" run --join-file "$work/dup.join" --node-rank 1 -q > /dev/null 2> "$work/dup1.err" &
first=$!
for i in $(seq 100); do grep -q . "$work/dup1.err" 2>/dev/null && break; pgrep -f "ringlab worker" > /dev/null && break; sleep 0.1; done
"$ringlab" run --join-file "$work/dup.join" --node-rank 1 -q > /dev/null 2> "$work/dup2.err"
expect "two nodes claiming node rank 1: the second is refused" "$work/dup2.err" "another node has already joined as --node-rank 1" $?
wait $first; rc_first=$?; wait $bg; rc0=$?
[ $rc_first = 0 ] && [ $rc0 = 0 ] && ok "two nodes claiming node rank 1: the run of the first goes on and ends well" \
  || fail "duplicate node rank: the first pair ended $rc0/$rc_first: $(head -2 "$work/dup1.err" "$work/dup.join.err")"

port=$(free_port); node0_bg "$port" 3 "$work/never.join"
wait $bg
expect "a node that never comes: node 0 names it within the timeout" "$work/never.join.err" "node 1 never joined within 3 s" $?

# Of three nodes, node 2 never comes: node 1, which did join, says what node 0 says, not that node
# 0's controller vanished.
port=$(free_port)
"$ringlab" run --nnodes 3 --nproc-per-node 1 --node-rank 0 --master-port "$port" --timeout 4 -q \
  --join-file "$work/two-of-three.join" > /dev/null 2> "$work/two-of-three.err" &
bg=$!
for i in $(seq 100); do [ -f "$work/two-of-three.join" ] && break; sleep 0.1; done
"$ringlab" run --join-file "$work/two-of-three.join" --node-rank 1 -q > /dev/null 2> "$work/two-of-three.1.err"
expect "a node that never comes: a node that joined says node 0's words" "$work/two-of-three.1.err" \
  "node 0 says: the run cannot start: node 2 never joined within 4 s" $?
wait $bg

# Ctrl-C on node 0 while it waits for node 1: no worker has started, so nothing is said of them.
port=$(free_port)
"$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 0 --master-port "$port" --timeout 60 \
  --join-file "$work/wait.join" > /dev/null 2> "$work/wait.err" &
waiting=$!
for i in $(seq 100); do [ -f "$work/wait.join" ] && break; sleep 0.1; done
kill -INT $waiting; wait $waiting; rc=$?
if [ $rc = 130 ] && grep -q "stopping before any worker started (not every node has joined)" "$work/wait.err" &&
   grep -q "stopped while waiting for the other nodes to join" "$work/wait.err" && ! grep -q "step boundary" "$work/wait.err"; then
  ok "Ctrl-C on node 0 before node 1 joined: exit 130, it says no worker had started"
else fail "Ctrl-C on node 0 before node 1 joined (exit $rc): $(tail -3 "$work/wait.err")"; fi

# Of three nodes, node 1 joined and is stopped (Ctrl-C) while node 0 still waits for node 2:
# node 1 started no worker, and tells node 0, which stops waiting at once instead of at its timeout.
nodes_0_and_1_bg 3 three --timeout 60
# Node 1 says when node 0 has taken it in, before any worker starts.
for i in $(seq 100); do grep -q "node 1 of 3 joined run .*its workers start when every node has joined" "$work/three.1.err" 2> /dev/null && break; sleep 0.1; done
grep -q "node 1 of 3 joined run" "$work/three.1.err" || fail "node 1 of 3 never said it joined: $(cat "$work/three.1.err")"
kill -INT $node1; wait $node1; rc1=$?
for i in $(seq 100); do kill -0 $node0 2> /dev/null || break; sleep 0.1; done  # 10 s, far under its 60
if kill -0 $node0 2> /dev/null; then
  kill $node0; fail "Ctrl-C on a joined node while node 0 waited for another: node 0 went on waiting"
else
  wait $node0; rc0=$?
  if [ $rc1 = 130 ] && grep -q "stopped while waiting for node 0 to start the run" "$work/three.1.err" &&
     grep -q "SIGINT (Ctrl-C) on node 1: stopped while waiting for the other nodes to join" "$work/three.0.err"; then
    ok "Ctrl-C on node 1 of 3 while node 0 waits for node 2: node 1 exits 130, node 0 stops waiting and says why"
  else fail "Ctrl-C on a joined node (exits $rc1/$rc0): $(tail -2 "$work/three.1.err") / $(tail -2 "$work/three.0.err")"; fi
fi

# Ctrl-C on node 1 while the run trains: both nodes stop together, and node 1 says that node 0 (not
# node 1, which prints no epochs) prints the epochs already trained.
nodes_0_and_1_bg 2 train --timeout 60 --epochs 100000
for i in $(seq 200); do grep -q "every node has joined" "$work/train.1.err" 2> /dev/null && break; sleep 0.1; done
sleep 1
kill -INT $node1; wait $node1; rc1=$?
for i in $(seq 200); do kill -0 $node0 2> /dev/null || break; sleep 0.1; done
kill $node0 2> /dev/null; wait $node0; rc0=$?
if [ $rc1 = 130 ] && grep -q "node 0 still prints the epochs already trained" "$work/train.1.err" &&
   ! grep -q "the epochs already trained are still printed" "$work/train.1.err"; then
  ok "Ctrl-C on node 1 while training: it exits 130 and says node 0 prints the epochs (node 0 exit $rc0)"
else fail "Ctrl-C on node 1 while training (exits $rc1/$rc0): $(tail -3 "$work/train.1.err")"; fi

# A second node 0 given the join file of a run whose node 0 answers: refused, the file left as it was.
port=$(free_port)
"$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 0 --master-port "$port" --timeout 20 -q \
  --join-file "$work/live.join" > /dev/null 2> "$work/live.0.err" &
live0=$!
for i in $(seq 100); do [ -f "$work/live.join" ] && break; sleep 0.1; done
before=$(md5sum < "$work/live.join")
"$ringlab" run --nnodes 2 --nproc-per-node 1 --node-rank 0 --master-port "$(free_port)" -q \
  --join-file "$work/live.join" > /dev/null 2> "$work/live.dup.err"
rc=$?
after=$(md5sum < "$work/live.join")
# Node 1 is given a job flag of its own: node 0's job runs, and a note names what was not used.
"$ringlab" run --join-file "$work/live.join" --node-rank 1 -q --epochs 9 > /dev/null 2> "$work/live.1.err"
rc1=$?
grep -q "given here and not used: epochs 9 (node 0's: 4)" "$work/live.1.err" && ok "node 1's own --epochs 9 is named as not used" \
  || fail "node 1's --epochs 9: $(cat "$work/live.1.err")"
wait $live0; rc0=$?
if [ $rc = 2 ] && grep -q "it belongs to run .*, whose node 0 still answers" "$work/live.dup.err" &&
   [ "$before" = "$after" ] && [ $rc1 = 0 ] && [ $rc0 = 0 ]; then
  ok "a second node 0 given a live run's join file is refused (exit 2); the first run's node 1 still joins it"
else fail "a live run's join file: exit $rc, then $rc1/$rc0: $(head -2 "$work/live.dup.err" "$work/live.1.err")"; fi

[ ! -e "$work/never.join" ] && ok "node 0 removed its join file (it holds the token) when the run ended" \
  || fail "node 0 left its join file behind"
chmod 644 "$work/never.join.copy"
"$ringlab" run --join-file "$work/never.join.copy" --node-rank 1 -q > /dev/null 2> "$work/mode.err"
expect "a join file others can read is refused" "$work/mode.err" "others can read it" $?
# Node 0 with --join-file and no --master-port takes any free port and writes it into the file
# (it asked every node for --master-port, which the file already carries).
"$ringlab" run --nnodes 2 --nproc-per-node 1 --join-file "$work/free.join" -q --epochs 2 --report "$work/free.json" \
  > /dev/null 2> "$work/free.0.err" &
free0=$!
for _ in $(seq 300); do [ -f "$work/free.join" ] && break; sleep 0.1; done
"$ringlab" run --join-file "$work/free.join" --node-rank 1 -q > /dev/null 2> "$work/free.1.err"; free1_rc=$?
wait $free0; free0_rc=$?
if [ $free0_rc = 0 ] && [ $free1_rc = 0 ] && $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["world_size"] == 2 and len(r["epoch_mse"]) == 2' "$work/free.json"; then
  ok "node 0 --join-file without --master-port: any free port, carried by the file; both nodes ended well"
else fail "node 0 --join-file without --master-port: exit $free0_rc/$free1_rc: $(head -3 "$work/free.0.err" "$work/free.1.err")"; fi

"$ringlab" run --join-file "$work" --node-rank 1 -q > /dev/null 2> "$work/dir.err"
expect "a directory given as the join file is called one (it was told to chmod 600 the folder)" "$work/dir.err" \
  "not a join file (a directory)" $?

"$ringlab" run --nnodes 2 --nproc-per-node 2 -n 3 --master-port 29999 -q > /dev/null 2> "$work/ws.err"
expect "-n disagreeing with --nnodes x --nproc-per-node" "$work/ws.err" "--world-size 3 disagrees with --nnodes 2 x --nproc-per-node 2 = 4" $?

chmod 600 "$work/never.join.copy"
"$ringlab" run --join-file "$work/never.join.copy" -q > /dev/null 2> "$work/norank.err"
expect "--join-file without --node-rank is refused, not run as a one-rank job" "$work/norank.err" "give --node-rank K" $?

# ---- A whole node lost; a stop asked for on node 1; node 0 stopped at once ---------------------
# long_pair LABEL: a 2 x 2 run long enough to act on, on loopback; pids of the two controllers.
# IN_B: a command prefix for node 1 (as run_pair takes it).
long_pair() {
  run_pair "$1" "" "${IN_B:-}" 127.0.0.1 -q --samples 200000 --epochs 100 --trace-level none --timeout 300
  for i in $(seq 300); do [ "$(pgrep -fc "ringlab worker")" -ge 4 ] && break; sleep 0.1; done
  sleep 1
  read -r -a pair < "$work/$1.pids"
  # The subshells' children: the two `ringlab run` controllers.
  node0_pid=$(pgrep -P "${pair[0]}" -f "ringlab run" | head -1)
  node1_pid=$(pgrep -P "${pair[1]}" -f "ringlab run" | head -1)
}

long_pair lost
t0=$(date +%s)
kill -9 "$node1_pid"
wait_pair lost
took=$(( $(date +%s) - t0 ))
# Node 0's own ranks failed after it (their peers' connections closed): said as what came after.
if grep -q "node 1 (ranks 2 to 3) was lost: its controller stopped answering" "$work/lost.0.err" &&
   grep -A1 "was lost" "$work/lost.0.err" | tail -1 | grep -qx "after that, on the nodes still answering:"; then
  ok "node 1's controller killed: node 0 says node 1 was lost (after ${took} s), not that its own rank failed"
else
  fail "node 1's controller killed: node 0 said: $(head -3 "$work/lost.0.err")"
fi
# Its ranks' positions are their last reports (their unsent events went with the node): said so.
if [ "$(grep -c '^  rank [23][: ].*(its last report: its unsent events went with its node)$' "$work/lost.0.err")" = 2 ]; then
  ok "the lost node's ranks are placed by their last reports, and said to be"
else
  fail "the lost node's ranks' positions: $(grep -A5 'where each rank was' "$work/lost.0.err")"
fi

long_pair int1
kill -INT "$node1_pid"
wait_pair int1
if [ "$(cat "$work/int1.1.rc")" = 130 ] && $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] is True and r["stopped_by"].startswith("SIGINT"), (r.get("interrupted"), r.get("stopped_by"))
assert r.get("stopped_on_node") == 1, r.get("stopped_on_node")' "$work/int1.json"; then
  ok "Ctrl-C on node 1: node 1 exits 130, node 0's report says the run was interrupted there (stopped_on_node 1)"
else
  fail "Ctrl-C on node 1: node 1 exit $(cat "$work/int1.1.rc"); node 0: $(head -2 "$work/int1.0.err")"
fi

# A healthy run of more than 15 s: node 1's controller sees none of the ranks' events (they go to
# node 0), and said "no rank has reported anything in the 15 s since the start" of every such run.
run_pair healthy "" "" 127.0.0.1 --samples 200000 --epochs 1000 --trace-level none --timeout 300
read -r -a pair < "$work/healthy.pids"
sleep 18
pkill -INT -P "${pair[0]}" -f "ringlab run"
wait_pair healthy
if grep -q "have reported no\|no rank has reported anything" "$work/healthy.1.err"; then
  fail "a healthy run: node 1 called it quiet: $(grep -m1 'reported' "$work/healthy.1.err")"
elif ! grep -q "node 0 says: interrupted by SIGINT" "$work/healthy.1.err"; then
  fail "a healthy run stopped on node 0: node 1 said: $(tail -2 "$work/healthy.1.err")"
else
  ok "a healthy run of 18 s: node 1 says nothing of quiet steps, and passes node 0's stop on"
fi

# Node 0's controller killed: node 1 says node 0 is gone, in either of the ways it can find out
# (node 0's beats stop, or its store's connection breaks under a request); it said "the
# controller could not go on: store.set: the connection to the store at ... was lost earlier".
long_pair lost0
kill -9 "$node0_pid"
wait_pair lost0
if grep -q "node 0 was lost: its controller stopped answering\|node 0 did not say how the run ended: its controller is gone" \
     "$work/lost0.1.err" && ! grep -q "the controller could not go on" "$work/lost0.1.err"; then
  ok "node 0's controller killed: node 1 says node 0 is gone (exit $(cat "$work/lost0.1.rc"))"
else
  fail "node 0's controller killed: node 1 said: $(tail -3 "$work/lost0.1.err")"
fi
[ "$(cat "$work/lost0.1.rc")" != 0 ] || fail "node 0's controller killed: node 1 exited 0"

# Ctrl-Z on node 1, typed at a shell with job control: the shell started node 1 as a job, a
# process group of its own, and the terminal sends SIGTSTP to that group (the ranks are in groups
# of their own). Node 0 is told before the controller stops, and does not take its still beats for
# a lost node. (This test's own group may be orphaned, under a CI runner: as_job makes the job.)
# Like an interactive shell, as_job stays while its job is stopped (a shell that exits leaves its
# stopped job orphaned, and bash sends such a job SIGTERM).
cat > "$work/as_job" << 'SH'
#!/usr/bin/env bash
set -m
"$@" &
job=$!
while :; do
  wait $job
  status=$?
  kill -0 $job 2> /dev/null || exit $status
  sleep 0.1
done
SH
chmod +x "$work/as_job"
IN_B=$work/as_job long_pair tstp
node1_pid=$(pgrep -P "$node1_pid" -f "ringlab run" | head -1)  # under as_job
kill -TSTP -- -"$node1_pid"
sleep 7  # over twice the 3 s of silence after which node 0 takes a node for lost
tstp_state=$(ps -o stat= -p "$node1_pid" | tr -d ' ')
tstp_node0=$(kill -0 "$node0_pid" 2> /dev/null && echo alive || echo gone)
tstp_workers=$(pgrep -fc "ringlab worker")
kill -CONT -- -"$node1_pid"
sleep 1
kill -INT "$node0_pid"
wait_pair tstp
if [[ "$tstp_state" == T* ]] && [ "$tstp_node0" = alive ] && [ "$tstp_workers" -ge 4 ] && $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] is True and r["stopped_by"].startswith("SIGINT"), (r.get("interrupted"), r.get("stopped_by"), r.get("failure"))
assert r.get("stopped_on_node") == 0, r.get("stopped_on_node")
assert "lost" not in r.get("failure", ""), r["failure"]' "$work/tstp.json"; then
  ok "Ctrl-Z on node 1 for 7 s: node 0 and the 4 ranks go on; resumed, the run ends as node 0's Ctrl-C asked"
else
  fail "Ctrl-Z on node 1: its controller $tstp_state, node 0 $tstp_node0, $tstp_workers workers; node 0 said: $(head -3 "$work/tstp.0.err")"
fi

# The same where no shell could resume node 1 (it is its own session, as under `ssh -t host
# ringlab ...`): Ctrl-Z is ignored, as the kernel ignores it for such a group, and it trains on.
IN_B=setsid long_pair orphan
kill -TSTP -- -"$node1_pid"
sleep 1
orphan_state=$(ps -o stat= -p "$node1_pid" | tr -d ' ')
kill -INT "$node0_pid"
wait_pair orphan
# Not stopped: sleeping in a wait or running at that instant (R on a busy machine), never T.
if [[ "$orphan_state" == [SR]* ]] && $py -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] is True and "suspended" not in r.get("failure", ""), r.get("failure")' "$work/orphan.json"; then
  ok "Ctrl-Z on a node 1 no shell could resume: ignored, it goes on (stopped by node 0's Ctrl-C)"
else
  fail "Ctrl-Z on a node 1 without a shell: its controller $orphan_state; node 0 said: $(tail -2 "$work/orphan.0.err")"
fi

long_pair int00
kill -INT "$node0_pid"; sleep 0.15; kill -INT "$node0_pid"
wait_pair int00
if [ "$(cat "$work/int00.1.rc")" = 1 ] && grep -q "node 0" "$work/int00.1.err"; then
  ok "node 0 stopped at once (a second Ctrl-C): node 1 does not report success (exit $(cat "$work/int00.1.rc"))"
else
  fail "node 0 stopped at once: node 1 said: $(cat "$work/int00.1.out" "$work/int00.1.err" | head -3)"
fi

echo "$failures failure(s)"
[ $failures = 0 ]
