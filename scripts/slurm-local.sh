#!/usr/bin/env bash
# A throw-away single-node Slurm cluster (munge + slurmctld + slurmd) for
# trying `fly-tune --executor=slurm` and for the tests in test/Slurm:
#
#   scripts/slurm-local.sh start    # installs the packages when missing
#   . "${FLY_SLURM_RUN:-/tmp/fly-slurm}/env.sh"   # SLURM_CONF for the clients
#   scripts/slurm-local.sh status
#   scripts/slurm-local.sh stop
#
# As root, without systemd or cgroups; every file lives under $FLY_SLURM_RUN
# and /etc is left alone. start and stop are idempotent. Debian 12 (Slurm 22.05).
set -euo pipefail
RUN=${FLY_SLURM_RUN:-/tmp/fly-slurm}
CONF=$RUN/slurm.conf
export SLURM_CONF=$CONF
t0=$(date +%s%N)
log() { printf '[slurm-local %d ms] %s\n' $(( ($(date +%s%N) - t0) / 1000000 )) "$*"; }
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
up() {
  alive "$RUN/munged.pid" && alive "$RUN/slurmctld.pid" && alive "$RUN/slurmd.pid" &&
    scontrol ping >/dev/null 2>&1
}

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
    command -v sbatch >/dev/null && command -v munged >/dev/null && return
  [[ $(id -u) -eq 0 ]] || { echo "slurm-local: installing Slurm needs root" >&2; exit 1; }
  log "installing slurmctld slurmd slurm-client munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge >/dev/null
}

# Cancel every job and wait until none is left before the daemons go: killing
# slurmd while steps run leaves slurmstepd orphans that ignore SIGTERM.
drain() {
  scontrol ping >/dev/null 2>&1 || return 0
  squeue -h -o %A | xargs -r scancel 2>/dev/null || true
  for _ in $(seq 150); do
    [[ -z $(squeue -h 2>/dev/null) && -z $(sinfo -h -t completing -o %n 2>/dev/null) ]] && return
    sleep 0.2
  done
}

# Signals only the PIDs this script recorded; daemons take ~2 s to exit, so
# signal all first, then wait for each.
stop_daemons() {
  local pids=() p pid
  for p in slurmd slurmctld munged; do
    alive "$RUN/$p.pid" && pid=$(cat "$RUN/$p.pid") && kill "$pid" 2>/dev/null && pids+=("$p:$pid")
  done
  for p in "${pids[@]+"${pids[@]}"}"; do
    pid=${p##*:}
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "${p%%:*} ($pid) still alive, SIGKILL"; kill -9 "$pid"; }
  done
  # If draining failed: step daemons and job processes of this cluster only
  # (they inherit our SLURM_CONF; job processes also carry SLURM_JOB_ID).
  local d env
  for d in /proc/[0-9]*; do
    env=$( { tr '\0' '\n' <"$d/environ"; } 2>/dev/null ) || continue
    grep -qx "SLURM_CONF=$CONF" <<<"$env" || continue
    if [[ $(cat "$d/comm" 2>/dev/null) == slurmstepd ]] || grep -q '^SLURM_JOB_ID=' <<<"$env"; then
      log "killing leftover $(cat "$d/comm" 2>/dev/null) ${d#/proc/}"
      kill -9 "${d#/proc/}" 2>/dev/null || true
    fi
  done
}

start() {
  if up; then log "already up; export SLURM_CONF=$CONF"; return; fi
  install_packages
  [[ $(id -u) -eq 0 ]] || { echo "slurm-local: the daemons run as root" >&2; exit 1; }
  # Half-started leftovers of an earlier run: stop them and start clean.
  [[ -f $CONF ]] && drain
  stop_daemons
  rm -rf "$RUN"
  mkdir -p "$RUN"/{munge,munge-key,state,spool,log}
  chmod 755 "$RUN" "$RUN/munge" # the socket must be reachable by job users
  chmod 700 "$RUN/munge-key"

  # A private munged: own key and socket, /etc/munge untouched.
  local key=$RUN/munge-key/munge.key sock=$RUN/munge/munge.socket
  mungekey --create --keyfile="$key" --force 2>/dev/null ||
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
  chmod 400 "$key"
  munged --force --socket="$sock" --key-file="$key" --pid-file="$RUN/munged.pid" \
    --log-file="$RUN/log/munged.log" --seed-file="$RUN/munge-key/munged.seed"
  for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
  munge -n -S "$sock" | unmunge -S "$sock" >/dev/null

  local host cpus mem
  host=$(hostname -s)
  cpus=${FLY_SLURM_CPUS:-$(nproc)}
  # A little under the detected memory, or the node drains for "Low RealMemory".
  mem=$(( $(free -m | awk '/^Mem:/{print $2}') * 9 / 10 ))
  cat >"$CONF" <<CONF
ClusterName=fly-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmctldPort=${FLY_SLURMCTLD_PORT:-6817}
SlurmdPort=${FLY_SLURMD_PORT:-6818}
StateSaveLocation=$RUN/state
SlurmdSpoolDir=$RUN/spool
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd.log
# No systemd, no cgroups in containers and CI machines.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# The default batch_sched_delay=3 schedules in 3-second ticks.
SchedulerParameters=batch_sched_delay=0
# No slurmdbd: exit codes come from scontrol show job (kept MinJobAge s).
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$RUN/log/jobcomp.txt
ReturnToService=2
MailProg=/bin/true
MaxArraySize=100001
MaxJobCount=200000
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  echo "export SLURM_CONF=$CONF" >"$RUN/env.sh"

  slurmctld -f "$CONF" -c
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
  slurmd -f "$CONF" -N "$host"
  local st=""
  for _ in $(seq 200); do
    st=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    [[ $st == idle ]] && break
    sleep 0.1
  done
  if [[ $st != idle ]]; then
    echo "slurm-local: node state '$st'" >&2
    tail -20 "$RUN"/log/slurm*.log >&2
    exit 1
  fi
  log "up: node $host idle ($cpus CPUs, $mem MB); export SLURM_CONF=$CONF"
}

stop() {
  if [[ ! -d $RUN ]]; then log "not running"; return; fi
  [[ -f $CONF ]] && drain
  stop_daemons
  rm -rf "$RUN"
  log "stopped"
}

status() {
  if up; then
    log "up; export SLURM_CONF=$CONF"
    sinfo -h -o '%P %T %c CPUs %D node(s)'
    squeue -h | head -20
  else
    log "down"; return 3
  fi
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*) echo "usage: $0 start|stop|status" >&2; exit 64 ;;
esac
