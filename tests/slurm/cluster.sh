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

# listening PORT: true when some process listens on this TCP port (read from /proc, iproute2 may be absent).
listening() {
  awk -v port="$(printf ':%04X' "$1")" 'substr($2, length($2) - 4) == port && $4 == "0A" {found = 1}
    END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
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
  # munged only when this script started it (a munged that was already serving is left alone), and last: the
  # Slurm daemons authenticate through it until they exit.
  if [ -f "$dir/munged.ours" ] && pid=$(pid_of /run/munge/munged.pid munged); then stop_pids "munged=$pid"; fi
  rm -rf "$dir"
  say "down, $dir removed"
}

start_munge() {
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munge already serving, reusing it"
    return 0
  fi
  [ -s /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (bootstrap.sh installs munge, whose postinst creates it)"
  mkdir -p /run/munge
  chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged
  touch "$dir/munged.ours"
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && {
      say "munged started (pid $(cat /run/munge/munged.pid))"
      return 0
    }
    sleep 0.2
  done
  fail "munged did not answer within 10 s"
}

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
  local state port
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmctld and slurmd run as root, munged as user munge)"
  for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/sinfo; do
    [ -x "$b" ] || die "$b is missing: run ./bootstrap.sh (it installs slurm-wlm, slurm-client and munge)"
  done
  down
  # Daemons whose state folder is gone (another MCMCLB_SLURM_DIR, or deleted) cannot be found by pid file here.
  for port in 6817 6818; do
    if listening $port; then
      if command -v ss >/dev/null; then ss -ltnpH "sport = :$port" >&2 || true; fi
      die "TCP port $port is taken (a Slurm daemon started elsewhere? stop it by its pid first)"
    fi
  done
  mkdir -p "$dir"
  write_conf
  start_munge
  # -c: a clean start, no jobs from an earlier state; -f: our slurm.conf, not /etc/slurm/slurm.conf.
  /usr/sbin/slurmctld -c -f "$conf" || fail "slurmctld failed to start"
  /usr/sbin/slurmd -f "$conf" -N "$host" || fail "slurmd failed to start"
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
