# A one-host Slurm cluster for a test, all of it in a folder of its own: its own munged (own key
# and socket, so the machine's /etc/munge is neither read nor changed), a slurmctld and a slurmd on
# ports of their own, state, spool, pid and log files in the folder. Sourced, not run.
#
#   slurm_up DIR   starts it; exports SLURM_CONF (every Slurm command of the test then talks to
#                  this cluster and no other) and sets SLURM_NODE (this host's short name, the
#                  only node). Returns 1 with SLURM_UP_ERROR set to the reason when it cannot:
#                  not root, a program missing, a daemon that does not start or does not come up.
#   slurm_down     cancels the cluster's jobs, stops the three daemons by their pid files, waits
#                  for them to go (SIGKILL after 10 s). Safe to call twice, or before slurm_up.
#
# The node has 2 CPUs and its partition OverSubscribe=FORCE:4; jobs that want more tasks than
# cores ask for them with --overcommit (-O), which salloc passes on to the sruns inside it.

SLURM_UP_ERROR="" SLURM_NODE="" _slurm_dir=""

_slurm_free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_up() {
  local dir=$1 program
  SLURM_UP_ERROR=""
  if [ "$(id -u)" -ne 0 ]; then
    SLURM_UP_ERROR="a private Slurm cluster needs root (slurmd runs jobs as any user); running as $(id -un)"
    return 1
  fi
  for program in munged slurmctld slurmd salloc srun sinfo squeue scancel; do
    command -v "$program" > /dev/null && continue
    SLURM_UP_ERROR="$program is not installed (scripts/setup.sh installs slurm-wlm and munge)"
    return 1
  done
  _slurm_dir=$dir
  SLURM_NODE=$(hostname -s)
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || { SLURM_UP_ERROR="cannot create $dir"; return 1; }
  chmod 755 "$dir" "$dir/munge"  # munged wants its socket's folder open to every user

  # munge wants a key of at least 1024 bytes (its documented minimum), readable by its owner only.
  head -c 1024 /dev/urandom > "$dir/munge/munge.key" && chmod 400 "$dir/munge/munge.key"
  if ! munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
      > "$dir/log/munged.out" 2>&1; then
    SLURM_UP_ERROR="munged did not start: $(tail -n 3 "$dir/log/munged.out" "$dir/log/munged.log" 2> /dev/null | tr '\n' ' ')"
    return 1
  fi

  local ctld_port slurmd_port
  ctld_port=$(_slurm_free_port) && slurmd_port=$(_slurm_free_port) || { SLURM_UP_ERROR="no free port"; return 1; }
  cat > "$dir/slurm.conf" << EOF
ClusterName=ringlab$$
SlurmctldHost=$SLURM_NODE
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$SLURM_NODE CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$SLURM_NODE Default=YES MaxTime=60 State=UP OverSubscribe=FORCE:4
EOF
  export SLURM_CONF="$dir/slurm.conf"
  if ! slurmctld -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 || ! slurmd -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1; then
    SLURM_UP_ERROR="the Slurm daemons did not start: $(tail -n 3 "$dir"/log/slurm*.out "$dir"/log/slurm*.log 2> /dev/null | tr '\n' ' ')"
    return 1
  fi
  local waited state=""
  for waited in $(seq 150); do
    state=$(timeout 5 sinfo -h -n "$SLURM_NODE" -o %T 2> /dev/null)
    [ "$state" = idle ] && return 0
    sleep 0.1
  done
  SLURM_UP_ERROR="the node is '${state:-not known}' after 15 s, not idle: $(tail -n 3 "$dir"/log/slurm*.log 2> /dev/null | tr '\n' ' ')"
  return 1
}

# Each daemon by the pid in its own pid file: SIGTERM, then SIGKILL after 10 s.
_slurm_stop() {
  local pid_file=$1 pid waited
  [ -s "$pid_file" ] || return 0
  pid=$(cat "$pid_file")
  kill -TERM "$pid" 2> /dev/null || return 0
  for waited in $(seq 100); do
    kill -0 "$pid" 2> /dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2> /dev/null
}

slurm_down() {
  [ -n "$_slurm_dir" ] || return 0
  local dir=$_slurm_dir waited
  if [ -n "${SLURM_CONF:-}" ] && [ -s "$dir/slurmctld.pid" ]; then
    timeout 10 scancel --quiet --user="$(id -un)" 2> /dev/null
    # The steps' processes end before their slurmstepd reports them gone.
    for waited in $(seq 100); do
      [ -z "$(timeout 5 squeue -h 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  _slurm_stop "$dir/slurmd.pid"
  _slurm_stop "$dir/slurmctld.pid"
  _slurm_stop "$dir/munge/munged.pid"
  _slurm_dir=""
}
