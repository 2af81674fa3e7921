#!/bin/sh
# interrupt.sh INT|TERM <out-prefix> <work-dir> fly-tune args...
# Sends the signal to fly-tune while its array runs; prints how fly-tune
# ended and the states of the array's tasks once none runs.
sig=$1 out=$2 work=$3
shift 3
"$@" >"$out.out" 2>"$out.err" &
pid=$!
array=""
for _ in $(seq 1200); do
  for rec in "$work"/*/slurm/running-array; do
    [ -f "$rec" ] && array=$(cat "$rec")
  done
  [ -n "$array" ] && [ -n "$(squeue -h -r -j "$array" -t RUNNING -o %i 2>/dev/null)" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
kill -s "$sig" $pid
wait $pid
echo "fly-tune exit status $?"
for _ in $(seq 300); do
  [ -z "$(squeue -h -r -j "$array" -t PENDING,RUNNING,COMPLETING -o %i 2>/dev/null)" ] && break
  sleep 0.1
done
squeue -h -r -t all -j "$array" -o %T | sort | uniq -c | sed 's/^ *//'
