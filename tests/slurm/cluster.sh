#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A real single-node Slurm (slurmctld + slurmd as root, munge auth) on this machine, for tests and CI.
#   tests/slurm/cluster.sh up       start it (stopping whatever a previous run left), wait until the node is idle
#   tests/slurm/cluster.sh down     cancel its jobs, stop the daemons by pid, delete the state folder
#   tests/slurm/cluster.sh status   print the daemons and sinfo; exit 0 only when the node is up
#   tests/slurm/cluster.sh env      print the export line clients need (sbatch, srun, squeue, ...)
# Installs nothing (bootstrap.sh installs slurm-wlm, slurm-client and munge) and needs root. Everything it writes
# (slurm.conf, pid files, logs, state and spool) lives in MCMCLB_SLURM_DIR (default /tmp/mcmclb-slurm), so the
# clients need SLURM_CONF=$MCMCLB_SLURM_DIR/slurm.conf; jobs inherit it because sbatch exports the environment.
# The daemons talk over loopback only (NodeAddr and SlurmctldHost address 127.0.0.1).
# Each cluster is whole in its folder, so that several run side by side (one per test) and beside a machine's own
# Slurm: its own munged on a socket in the folder, and TCP ports that nothing else holds when it starts (Slurm's
# 6817 and 6818 where they are free, the next free ones otherwise), written into its slurm.conf.
set -euo pipefail

dir=${MCMCLB_SLURM_DIR:-/tmp/mcmclb-slurm}
conf=$dir/slurm.conf
host=$(uname -n)
host=${host%%.*} # the short name, as slurmd reports it
wait_s=${MCMCLB_SLURM_WAIT_S:-60}
export SLURM_CONF=$conf

say() { echo "cluster: $*"; }
die() {
  echo "cluster: $*" >&2
  exit 1
}

# fail MESSAGE: a start that went wrong half way; show the logs, stop what did start, exit 1.
fail() {
  echo "cluster: $*; last log lines:" >&2
  tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  down >&2
  exit 1
}

# pid_of FILE NAME: the pid in FILE when that process is alive and is NAME (a recycled pid is not ours).
pid_of() {
  local pid
  [ -r "$1" ] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ] && echo "$pid"
}

# alive NAME=PID...: true while any of these processes still exists.
alive() {
  local np
  for np in "$@"; do [ -d "/proc/${np#*=}" ] && return 0; done
  return 1
}

# stop_pids NAME=PID...: SIGTERM to all at once (each takes about 2 s to exit), up to 10 s grace, then SIGKILL.
stop_pids() {
  local np left=()
  for np in "$@"; do kill -TERM "${np#*=}" 2>/dev/null && left+=("$np"); done
  [ ${#left[@]} -gt 0 ] || return 0
  for _ in $(seq 50); do
    alive "${left[@]}" || break
    sleep 0.2
  done
  for np in "${left[@]}"; do
    if [ -d "/proc/${np#*=}" ]; then
      kill -KILL "${np#*=}" 2>/dev/null || true
      say "killed ${np%%=*} (pid ${np#*=}) after 10 s"
    else
      say "stopped ${np%%=*} (pid ${np#*=})"
    fi
  done
}

# port_used PORT: true when this TCP port is the local end of any socket, listening or connected, on any address
# (read from /proc, iproute2 may be absent): a daemon could not bind it.
port_used() {
  awk -v port="$(printf ':%04X' "$1")" 'substr($2, length($2) - 4) == port {found = 1}
    END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# listening PORT: true when some process listens on this TCP port.
listening() {
  awk -v port="$(printf ':%04X' "$1")" 'substr($2, length($2) - 4) == port && $4 == "0A" {found = 1}
    END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# free_ports: two TCP ports nobody uses, for slurmctld and slurmd: 6817 and 6818 where they are free, else the
# next free ones below the kernel's range for outgoing connections (where a client could take one any moment).
free_ports() {
  local p last found=()
  last=$(($(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768) - 1))
  for ((p = 6817; p <= last && ${#found[@]} < 2; p++)); do
    port_used $p || found+=("$p")
  done
  [ ${#found[@]} -eq 2 ] || return 1
  echo "${found[@]}"
}

node_state() { sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -n1; }

down() {
  local pid jobs daemons
  [ -d "$dir" ] || {
    say "nothing to stop ($dir does not exist)"
    return 0
  }
  if pid=$(pid_of "$dir/slurmctld.pid" slurmctld); then
    # Cancel every job first so that no slurmstepd outlives slurmd.
    jobs=$(squeue -h -o '%i' 2>/dev/null | tr '\n' ' ' || true)
    if [ -n "${jobs// /}" ]; then
      # shellcheck disable=SC2086  # one job id per word
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 50); do
        [ -z "$(squeue -h -o '%i' 2>/dev/null)" ] && break
        sleep 0.2
      done
      say "cancelled job(s) $jobs"
    fi
  fi
  daemons=()
  if pid=$(pid_of "$dir/slurmd.pid" slurmd); then daemons+=("slurmd=$pid"); fi
  if pid=$(pid_of "$dir/slurmctld.pid" slurmctld); then daemons+=("slurmctld=$pid"); fi
  stop_pids "${daemons[@]}"
  # This cluster's munged last: the Slurm daemons authenticate through it until they exit.
  if pid=$(pid_of "$dir/munge/munged.pid" munged); then stop_pids "munged=$pid"; fi
  rm -rf "$dir"
  say "down, $dir removed"
}

# start_munge: a munged of this cluster's own, on a socket in its folder (slurm.conf's AuthInfo points the daemons
# and clients there). A munged shared between clusters, or the machine's own, would be stopped by the first
# cluster to go down while the others still authenticate through it.
start_munge() {
  local sock=$dir/munge/munge.socket
  [ -s /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (bootstrap.sh installs munge, whose postinst creates it)"
  mkdir -p "$dir/munge"
  runuser -u munge -- test -x "$dir/munge" ||
    fail "user munge cannot reach $dir (munged runs as munge): make the folders above it searchable (chmod o+x)"
  chown munge:munge "$dir/munge"
  chmod 0755 "$dir/munge"
  runuser -u munge -- /usr/sbin/munged --socket="$sock" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" || fail "munged failed to start"
  for _ in $(seq 50); do
    munge -S "$sock" -n </dev/null 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 && {
      say "munged started (pid $(cat "$dir/munge/munged.pid"), socket $sock)"
      return 0
    }
    sleep 0.2
  done
  fail "munged did not answer within 10 s"
}

# write_conf CTLD_PORT SLURMD_PORT
write_conf() {
  local mem
  # RealMemory below the free memory, as on a real node (without config_overrides, slurmd drains a node that has
  # less memory than declared).
  mem=$(awk '/^MemAvailable:/ {print int($2 / 1024 / 2)}' /proc/meminfo)
  mkdir -p "$dir/state" "$dir/spool"
  # CPUs=8 on fewer cores is allowed by config_overrides: 4- and 8-rank jobs would never start otherwise.
  # MpiDefault=none is Slurm's default, kept so that tests see what a stock cluster does (srun needs --mpi=pmi2).
  cat >"$conf" <<EOF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$1
SlurmdPort=$2
CommunicationParameters=NoInAddrAny
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=$mem State=UNKNOWN
PartitionName=compute Default=YES Nodes=ALL MaxTime=INFINITE State=UP
EOF
}

up() {
  local state ports lock
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmctld and slurmd run as root, munged as user munge)"
  for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/sinfo; do
    [ -x "$b" ] || die "$b is missing: run ./bootstrap.sh (it installs slurm-wlm, slurm-client and munge)"
  done
  down
  mkdir -p "$dir"
  start_munge
  # From choosing the ports until both daemons listen on them, one cluster at a time on this machine: two clusters
  # starting at once would otherwise both find the same ports free.
  exec {lock}>/tmp/mcmclb-slurm-ports.lock
  flock -w 60 $lock || fail "another cluster held /tmp/mcmclb-slurm-ports.lock for 60 s"
  ports=$(free_ports) || fail "no two free TCP ports between 6817 and the kernel's outgoing range"
  # shellcheck disable=SC2086  # two port numbers
  set -- $ports
  [ "$1 $2" = "6817 6818" ] || say "ports 6817 and 6818 are not both free (another Slurm here?): using $1 and $2"
  write_conf "$1" "$2"
  # -c: a clean start, no jobs from an earlier state; -f: our slurm.conf, not /etc/slurm/slurm.conf.
  /usr/sbin/slurmctld -c -f "$conf" || fail "slurmctld failed to start"
  /usr/sbin/slurmd -f "$conf" -N "$host" || fail "slurmd failed to start"
  for _ in $(seq 50); do
    listening "$1" && listening "$2" && break
    sleep 0.2
  done
  exec {lock}>&-
  for _ in $(seq $((wait_s * 5))); do
    state=$(node_state)
    [ "$state" = idle ] && {
      say "up: node $host idle in partition compute (slurmctld pid $(cat "$dir/slurmctld.pid"), slurmd pid $(cat "$dir/slurmd.pid"))"
      say "clients need: export SLURM_CONF=$conf"
      return 0
    }
    sleep 0.2
  done
  fail "node $host is '${state:-unknown}', not idle, after $wait_s s"
}

status() {
  local pid name ok=0
  for name in slurmctld slurmd; do
    if pid=$(pid_of "$dir/$name.pid" $name); then say "$name running (pid $pid)"; else
      say "$name not running"
      ok=1
    fi
  done
  [ $ok -eq 0 ] && sinfo -N -l && [ "$(node_state)" != "" ] || ok=1
  return $ok
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) die "usage: $0 up|down|status|env (state folder: \$MCMCLB_SLURM_DIR, default /tmp/mcmclb-slurm)" ;;
esac
