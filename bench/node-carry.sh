# Sourced by the scripts that run on the GPU node (bench/*/device-run.sh,
# bench/h200-env-run.sh): what travels there in .carry/ (git-ignored) and the
# order of repeated rounds.
#   .carry/fly.tar.zst  the wheel under test, unzipped (`zstd -19 --long=31`
#                       of a tar holding fly_snapshot/), with a zstd and its
#                       libraries in .carry/zstd
#   .carry/NAME.bsdiff  another build: a bsdiff of its libFlySnapshotCAPI.so
#                       against the carried one's, bspatch and its libbz2 in
#                       .carry/bsdiff (the rest of the wheels is the same)
carry=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.carry

carry_unzstd() {
  LD_LIBRARY_PATH="$carry/zstd" "$carry/zstd/zstd" -q -d --long=31 "$@"
}

# DEST/fly_snapshot: the carried wheel (kept where it is already there).
carry_unpack() {
  local dest=$1
  [ -x "$dest/fly_snapshot/bin/fly-tune" ] && return 0
  mkdir -p "$dest"
  carry_unzstd -c "$carry/fly.tar.zst" | tar xf - -C "$dest"
}

# The carried wheel unpacked in DEST, its fly-tune and ROCm toolkit in
# `tune` and `toolkit`, and OUT/node.txt describing it and the node.
carry_tools() {
  local dest=$1 out=$2
  carry_unpack "$dest"
  tune=$dest/fly_snapshot/bin/fly-tune toolkit=$dest/fly_snapshot/rocm-toolkit
  carry_describe "$dest" > "$out/node.txt"
}

# scaling.py's ROCDL config-space workload generated in DIR: its kernels'
# paths in the array `config`, its 16 hint sets in DIR/h16.json.
config_workload() {
  local dir=$1 bench
  bench=$(dirname "${BASH_SOURCE[0]}")
  config=()
  local tile unroll
  unroll=$(python3 -c "import sys; sys.path.insert(0, '$bench')
from scaling import CONFIG_UNROLL; print(CONFIG_UNROLL['rocdl'])")
  for tile in $(python3 -c "import sys; sys.path.insert(0, '$bench')
from scaling import CONFIG_TILES; print(' '.join(CONFIG_TILES['rocdl']))"); do
    python3 "$bench/gen_gemm.py" --target rocdl --tiles "$tile" --unroll "$unroll" \
      -o "$dir/config-$tile.mlir"
    config+=("$dir/config-$tile.mlir")
  done
  python3 -c "import sys, json; sys.path.insert(0, '$bench')
from scaling import hint_sets
json.dump(hint_sets('rocdl', 16), open('$dir/h16.json', 'w'))"
}

# bench/env_pairs.py with the carried fly-tune (carry_tools) and the --mode
# and --tool arguments after OUT, LIMIT, NS, P and REPS: the ROCDL GEMM
# 128x256 u16 (/tmp/fly/gemm-128x256-u16.mlir) at each N of NS, REPS rounds,
# into OUT/gemm, stopping after LIMIT seconds (the rows done are kept).
pairs_gemm() {
  local out=$1 limit=$2 ns=$3 p=$4 reps=$5 bench gemm=/tmp/fly/gemm-128x256-u16.mlir
  shift 5
  bench=$(dirname "${BASH_SOURCE[0]}")
  python3 "$bench/gen_gemm.py" --target rocdl --tiles 128x256 --unroll 16 -o "$gemm"
  timeout "$limit" python3 "$bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
    --target rocdl:gfx942 --inputs "$gemm" --N "$ns" --P "$p" --reps "$reps" "$@" \
    --work /tmp/fly/gemm --out "$out/gemm" > "$out/gemm.log" 2>&1 || echo "gemm: rc $?"
}

# bench/env_pairs.py at P=16 with the carried fly-tune (carry_tools) and the
# --mode and --tool arguments after OUT, LIMIT and REPS: the config sweep
# (config_workload's kernels in one sweep, N=16) REPS rounds into OUT/config,
# stopping after LIMIT seconds.
pairs_config() {
  local out=$1 limit=$2 reps=$3 bench
  shift 3
  bench=$(dirname "${BASH_SOURCE[0]}")
  timeout "$limit" python3 "$bench/env_pairs.py" --fly-tune "$tune" --toolkit "$toolkit" \
    --target rocdl:gfx942 --inputs "$(IFS=,; echo "${config[*]}")" --one-sweep --N 16 \
    --P 16 --reps "$reps" "$@" --work /tmp/fly/config --out "$out/config" \
    > "$out/config.log" 2>&1 || echo "config: rc $?"
}

# pairs_config for CONFIG_REPS rounds (250 s), then pairs_gemm at N=64
# GEMM_REPS rounds (200 s), under the modes after OUT, CONFIG_REPS, GEMM_REPS.
pairs_config_and_gemm() {
  local out=$1 config_reps=$2 gemm_reps=$3
  shift 3
  pairs_config "$out" 250 "$config_reps" "$@"
  pairs_gemm "$out" 200 64 16 "$gemm_reps" "$@"
}

# The build unpacked in DEST/fly_snapshot and the node it runs on, for
# OUT/node.txt.
carry_describe() {
  local dest=$1
  "$dest/fly_snapshot/bin/fly-tune" --version | tail -1
  sha256sum "$dest/fly_snapshot/lib/libFlySnapshotCAPI.so"
  nproc
  lscpu | grep -E "Model name|Thread|Core|Socket"
  free -g | head -2
  nvidia-smi -L 2>/dev/null || true
}

# DEST/fly_snapshot: the tree of SRC/fly_snapshot with the build of
# .carry/NAME.bsdiff (kept where it is already there). The patched library
# is rewritten in tar's 10 KiB records: the page cache keeps a file in
# folios sized by how it was written, and a mapped library's peak RSS counts
# whole folios, so bspatch's single write cost about 20 MB more peak RSS on
# the node than the same bytes written as tar writes the carried wheel
# (bench/node-rule/node-h100-0652764-rss4).
carry_patched() {
  local src=$1 dest=$2 name=$3 so=fly_snapshot/lib/libFlySnapshotCAPI.so
  [ -x "$dest/fly_snapshot/bin/fly-tune" ] && return 0
  mkdir -p "$dest"
  cp -a "$src/fly_snapshot" "$dest/"
  LD_LIBRARY_PATH="$carry/bsdiff" "$carry/bsdiff/bspatch" "$src/$so" "$dest/$so.patched" \
    "$carry/$name.bsdiff"
  dd if="$dest/$so.patched" of="$dest/$so" bs=10240 status=none
  rm "$dest/$so.patched"
}

# The words after REP in their order, reversed on every even REP: repeated
# rounds of side-by-side modes, none always first.
in_turn() {
  local rep=$1
  shift
  if [ $((rep % 2)) = 0 ]; then
    local reversed=()
    for ((i = $#; i > 0; i--)); do reversed+=("${!i}"); done
    echo "${reversed[@]}"
  else
    echo "$@"
  fi
}
