#!/usr/bin/env bash
# scripts/slurm-local.sh — a real one-node SLURM cluster on this machine, for the
# fleet tests and for trying scripts/fleet.sh without a cluster.
#
#   scripts/slurm-local.sh start    write slurm.conf, start munged, slurmctld and slurmd,
#                                   wait until sinfo shows the node idle
#   scripts/slurm-local.sh stop     stop the three daemons this script started
#   scripts/slurm-local.sh env      print the `export` lines a shell needs to use it
#
# Everything (config, munge key and socket, state, logs, pid files) lives in
# $XATTN_SLURM_DIR (default /tmp/xattn-slurm); nothing under /etc is touched, so it
# does not disturb a SLURM already installed on the machine. Clients find it through
# SLURM_CONF=$XATTN_SLURM_DIR/slurm.conf (see `env`). Needs root (slurmd runs jobs as
# their submitting user) and Debian's slurm-wlm and munge (scripts/install-deps.sh).
# No cgroups: ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, so it runs in
# containers and VMs without a cgroup hierarchy of their own. No slurmdbd: sacct has
# nothing to show here; `fleet.sh status` uses squeue plus the jobs' progress files.
# Ports: $XATTN_SLURM_PORT (slurmctld, default 6817) and that + 1 (slurmd).
set -euo pipefail

DIR=${XATTN_SLURM_DIR:-/tmp/xattn-slurm}
PORT=${XATTN_SLURM_PORT:-6817}
CONF="$DIR/slurm.conf"
die() { echo "slurm-local: $*" >&2; exit 1; }

print_env() {
  echo "export SLURM_CONF=$CONF"
}

stop() {
  # jobs first: slurmstepd and job scripts outlive slurmd, so cancel every job of
  # this cluster and wait (briefly) for them to end
  if [ -f "$CONF" ] && [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
    local jobs
    jobs=$(SLURM_CONF="$CONF" squeue -h -o '%i' 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      SLURM_CONF="$CONF" scancel $jobs 2>/dev/null || true
      for _ in $(seq 30); do
        [ -z "$(SLURM_CONF="$CONF" squeue -h -o '%i' 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  # then only the daemons whose pid files this script wrote, one pid at a time
  for d in slurmd slurmctld munged; do
    local pf="$DIR/$d.pid"
    [ -f "$pf" ] || continue
    local pid
    pid=$(cat "$pf" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pf"
  done
  echo "slurm-local: stopped (state in $DIR)" >&2
}

start() {
  [ "$(id -u)" -eq 0 ] || die "cannot start SLURM: needs root (slurmd runs jobs as their user)"
  for b in munged mungekey slurmctld slurmd sinfo sbatch; do
    command -v "$b" >/dev/null || die "cannot start SLURM: '$b' not found (run scripts/install-deps.sh)"
  done
  stop 2>/dev/null || true
  rm -rf "$DIR"
  mkdir -p "$DIR"/{munge,ctld,spool,log}
  chmod 755 "$DIR"
  chmod 700 "$DIR/munge"
  local host node_line
  host=$(hostname -s)
  # the node exactly as slurmd sees it (CPUs, sockets, cores, memory), so it registers idle
  node_line=$(slurmd -C | head -1) || die "cannot start SLURM: 'slurmd -C' failed"
  node_line=${node_line/NodeName=$host/NodeName=$host NodeAddr=127.0.0.1}
  cat > "$CONF" <<EOF
# one-node SLURM on localhost, written by scripts/slurm-local.sh
ClusterName=xattn-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MpiDefault=none
SwitchType=switch/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
JobRequeue=1
ReturnToService=2
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=60
$node_line Feature=local State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mungekey --create --keyfile="$DIR/munge/munge.key" --force >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$DIR/munge/munge.key"
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
         --pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" \
         --seed-file="$DIR/munge/munged.seed" ||
    die "cannot start SLURM: munged failed ($(tail -1 "$DIR/log/munged.log" 2>/dev/null))"
  export SLURM_CONF="$CONF"
  slurmctld -f "$CONF" ||
    die "cannot start SLURM: slurmctld failed ($(tail -1 "$DIR/log/slurmctld.log" 2>/dev/null))"
  slurmd -f "$CONF" ||
    die "cannot start SLURM: slurmd failed ($(tail -1 "$DIR/log/slurmd.log" 2>/dev/null))"
  local state=""
  for _ in $(seq 60); do
    state=$(sinfo -h -n "$host" -o '%t' 2>/dev/null | head -1 || true)
    [ "$state" = idle ] && break
    sleep 1
  done
  if [ "$state" != idle ]; then
    local why
    why=$(grep -h -i -E 'error|fatal' "$DIR"/log/*.log 2>/dev/null | tail -1)
    stop 2>/dev/null
    die "cannot start SLURM: node $host is '${state:-unknown}' after 60 s, not idle (${why:-see $DIR/log})"
  fi
  echo "slurm-local: node $host idle (SLURM_CONF=$CONF)" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) echo "usage: scripts/slurm-local.sh start|stop|env" >&2; exit 2 ;;
esac
