#!/usr/bin/env bash
# A sweep on a real Slurm: starts munge, slurmctld and slurmd for this machine alone (a
# generated slurm.conf, ../shared/SLURM.md's recipe), writes the sweep's job-array script with
# `trainsim sweep --slurm`, submits it with sbatch, waits for the array, merges it with
# `--collect`, and checks that sweep.csv is byte-identical to the same sweep run locally.
# usage: sweep_slurm.sh TRAINSIM WORK_DIR (run from the source tree, as root). Exit 77 =
# skipped, with the reason, where Slurm is not installed or cannot start here.
set -euo pipefail
trainsim=$(realpath "$1")
work=$2
skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  [ -f "$work/ctld.log" ] && tail -20 "$work/ctld.log" >&2
  exit 1
}
for tool in slurmctld slurmd sbatch squeue sinfo munged munge unmunge; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    skip "Slurm is not installed ($tool missing: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip "starting Slurm's daemons needs root"

rm -rf "$work"
mkdir -p "$work/state" "$work/spool"
# munged runs as the munge user, which may not reach into the build tree (a clone in a
# private temporary directory): its key, socket and logs get a directory of their own in /tmp.
munge_dir=$(mktemp -d /tmp/trainsim-munge.XXXXXX)
pids=()
cleanup() { # the daemons stopped and gone (they remove their files as they exit)
  local all=("${pids[@]}")
  for f in "$work/ctld.pid" "$work/d.pid"; do
    [ -f "$f" ] && all+=("$(cat "$f")")
  done
  for p in "${all[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${all[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$munge_dir" || true
}
trap cleanup EXIT

# munge, with a key and a socket of this test's own (another munged may run on the machine).
key=$munge_dir/munge.key
dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
chown -R munge:munge "$munge_dir" 2>/dev/null || skip "no munge user (the munge package)"
chmod 0700 "$munge_dir"
chmod 0400 "$key"
socket=$munge_dir/munge.socket
runuser -u munge -- /usr/sbin/munged --key-file="$key" --socket="$socket" \
  --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" \
  --seed-file="$munge_dir/munge.seed" --force ||
  skip "munged does not start here ($(tail -1 "$munge_dir/munged.log" 2>/dev/null))"
for _ in $(seq 50); do [ -f "$munge_dir/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$munge_dir/munged.pid")")
munge -S "$socket" -n | unmunge -S "$socket" >/dev/null || skip "munge does not authenticate here"

host=$(hostname -s)
conf=$work/slurm.conf
cat >"$conf" <<EOF
ClusterName=trainsimtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/ctld.pid
SlurmdPidFile=$work/d.pid
SlurmctldLogFile=$work/ctld.log
SlurmdLogFile=$work/d.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=1001
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$conf
/usr/sbin/slurmctld || skip "slurmctld does not start here"
/usr/sbin/slurmd || skip "slurmd does not start here"
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.2
done
sinfo -h -o %t | grep -q idle || skip "the Slurm node does not come up ($(sinfo -h 2>&1 | head -1))"

# The sweep: 8 points of the tiny GPT, one a --set key of the platform.
spec=$work/spec.yaml
cat >"$spec" <<'EOF'
name: slurm-test
workload: tests/data/good/tiny.yaml
fixed: {gpus: 16}
grid:
  tp: [1, 2]
  micro_batch_size: [1, 2]
  network.global_link.bandwidth: [25GBps, 12.5GBps]
EOF
"$trainsim" sweep "$spec" --jobs 2 --quiet --out "$work/local" >/dev/null
"$trainsim" sweep "$spec" --slurm --partition debug --time 10:00 --out "$work/cluster" >/dev/null
grep -q -- '--array=0-7' "$work/cluster/sweep.slurm" || fail "the script is not an array of 8"
sbatch --wait "$work/cluster/sweep.slurm" >"$work/sbatch.out" 2>&1 ||
  fail "sbatch --wait failed: $(cat "$work/sbatch.out")"
"$trainsim" sweep "$spec" --collect --out "$work/cluster" >"$work/collect.out"
grep -q '0 points simulated now, 8 reused' "$work/collect.out" ||
  fail "--collect did not find every point: $(tail -1 "$work/collect.out")"
cmp "$work/local/sweep.csv" "$work/cluster/sweep.csv" ||
  fail "sweep.csv from Slurm differs from the local run"
echo "ok: 8 points as a Slurm job array, collected, byte-identical to the local sweep"
