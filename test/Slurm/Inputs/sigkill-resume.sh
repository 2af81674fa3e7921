#!/bin/sh
# sigkill-resume.sh cancel|adopt <out-prefix> <work-dir> fly-tune args...
# Runs fly-tune in the background and SIGKILLs it once its array delivered a
# first variant and still has tasks to run. Then
#   cancel: cancels what is left of that array, counts the variants it
#           delivered, and runs the same command again;
#   adopt:  runs the same command again at once, while the array runs.
# Prints what the second run submitted; returns the second run's status.
mode=$1 out=$2 work=$3
shift 3
"$@" >"$out.1.out" 2>"$out.1.err" &
pid=$!
array=""
for _ in $(seq 1200); do
  kill -0 $pid 2>/dev/null || { echo "fly-tune ended before the kill"; exit 1; }
  for rec in "$work"/*/slurm/running-array; do
    [ -f "$rec" ] && array=$(cat "$rec")
  done
  delivered=$(ls "$work"/*/results 2>/dev/null | wc -l)
  if [ -n "$array" ] && [ "$delivered" -ge 1 ] &&
     [ -n "$(squeue -h -r -j "$array" -t PENDING,RUNNING -o %i 2>/dev/null)" ]; then
    break
  fi
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
echo "killed fly-tune during array $array"
if [ "$mode" = cancel ]; then
  scancel "$array"
  for _ in $(seq 300); do
    [ -z "$(squeue -h -r -j "$array" -t PENDING,RUNNING,COMPLETING -o %i 2>/dev/null)" ] && break
    sleep 0.1
  done
  delivered=$(ls "$work"/*/results | wc -l)
  echo "delivered before the rerun: $delivered"
fi
"$@" >"$out.2.out" 2>"$out.2.err"
status=$?
submitted=$(sed -n 's/.*slurm: [0-9]* array(s), [0-9]* task(s), \([0-9]*\) variant(s) submitted.*/\1/p' "$out.2.err")
echo "second run submitted: ${submitted:-0}"
if [ "$mode" = cancel ]; then
  total=$(ls "$work"/*/results | wc -l)
  # Every variant is delivered once: the rerun submitted at most the ones
  # the first array left, and at least one.
  if [ "${submitted:-0}" -ge 1 ] && [ $((${submitted:-0} + delivered)) -le "$total" ]; then
    echo "only missing variants submitted"
  fi
fi
exit $status
