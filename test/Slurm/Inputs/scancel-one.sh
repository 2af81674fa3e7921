#!/bin/sh
# scancel-one.sh <out-prefix> <work-dir> fly-tune args...
# Runs fly-tune in the background, cancels one task of its array while that
# task runs, and returns fly-tune's exit status. <out-prefix>.cancelled
# names the task.
out=$1 work=$2
shift 2
"$@" >"$out.out" 2>"$out.err" &
pid=$!
task=""
for _ in $(seq 1200); do
  kill -0 $pid 2>/dev/null || break
  for rec in "$work"/*/slurm/running-array; do
    [ -f "$rec" ] || continue
    task=$(squeue -h -r -j "$(cat "$rec")" -t RUNNING -o %i 2>/dev/null | head -1)
  done
  [ -n "$task" ] && break
  sleep 0.1
done
if [ -z "$task" ]; then
  echo "no running task to cancel" >"$out.cancelled"
else
  scancel "$task"
  echo "cancelled task $task" >"$out.cancelled"
fi
wait $pid
