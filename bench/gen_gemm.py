#!/usr/bin/env python3
"""Emits GEMM-scale kernels in upstream dialects for the scaling benchmark.

  --target rocdl   gfx942 MFMA GEMM (amdgpu.mfma 32x32x8 f16 -> f32), a
                   kernel-only gpu.module: the rocdl:<chip> preset lowers it.
  --target nvvm    sm_90 tensor-core GEMM (nvgpu.mma.sync m16n8k16 f16 ->
                   f32) launched from a host function, so the nvvm:<sm>
                   preset's host pipeline (with convert-nvgpu-to-nvvm) runs.

Each thread block is --warps waves/warps; each of them keeps a --tile MxN
accumulator tile in registers across a K loop whose body is unrolled
--unroll times (MFMA: K step 8, mma.sync: K step 16). The tile and unroll
set the compile time: 128x128 with --unroll 4 on gfx942 issues 64 MFMAs per
iteration with 256 accumulator registers per lane, which also makes the
backend hints (waves_per_eu, maxnreg) change register allocation.

Layouts: A is MxK row-major, B is given transposed (NxK row-major) and C
transposed (NxM), so that every fragment is one contiguous vector load or
store. --kernels K emits K kernels with different tile shapes cycling
through --tiles (the config-space workload's kernel variants are separate
files, one shape each). Output is deterministic.
"""

import argparse
import sys

DIM = 4096  # M = N = K of the memrefs


class Emitter:
    def __init__(self):
        self.lines = []
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return f"%_{stem}{self.n}"

    def emit(self, indent, text):
        self.lines.append("  " * indent + text)

    def const(self, indent, value):
        name = self.fresh("x")
        self.emit(indent, f"{name} = arith.constant {value} : index")
        return name

    def add(self, indent, a, b):
        name = self.fresh("i")
        self.emit(indent, f"{name} = arith.addi {a}, {b} : index")
        return name


def parse_tile(text):
    m, n = text.lower().split("x")
    return int(m), int(n)


def emit_rocdl_kernel(e, name, tm, tn, unroll, warps):
    """One wave per 64 lanes; 32x32x8 MFMA fragments."""
    if tm % 32 or tn % 32:
        raise SystemExit(f"gen_gemm.py: rocdl tile {tm}x{tn}: M and N must be multiples of 32")
    fm, fn = tm // 32, tn // 32
    acc = "vector<16xf32>"
    frag = "vector<4xf16>"
    mt = f"memref<{DIM}x{DIM}xf16>"
    ct = f"memref<{DIM}x{DIM}xf32>"
    e.emit(2, f"gpu.func @{name}(%A: {mt}, %Bt: {mt}, %Ct: {ct}) kernel "
              f"attributes {{known_block_size = array<i32: {64 * warps}, 1, 1>}} {{")
    e.emit(3, "%c0 = arith.constant 0 : index")
    e.emit(3, "%c4 = arith.constant 4 : index")
    e.emit(3, "%c32 = arith.constant 32 : index")
    e.emit(3, "%c64 = arith.constant 64 : index")
    e.emit(3, f"%cK = arith.constant {DIM} : index")
    e.emit(3, f"%cStep = arith.constant {8 * unroll} : index")
    e.emit(3, f"%cTM = arith.constant {tm} : index")
    e.emit(3, f"%cTN = arith.constant {tn} : index")
    e.emit(3, f"%cWarps = arith.constant {warps} : index")
    e.emit(3, "%tid = gpu.thread_id x")
    e.emit(3, "%bx = gpu.block_id x")
    e.emit(3, "%by = gpu.block_id y")
    e.emit(3, "%lane = arith.remui %tid, %c64 : index")
    e.emit(3, "%wave = arith.divui %tid, %c64 : index")
    e.emit(3, "%l32 = arith.remui %lane, %c32 : index")
    e.emit(3, "%lhi = arith.divui %lane, %c32 : index")
    e.emit(3, "%kq = arith.muli %lhi, %c4 : index")
    # Waves split the block tile along M.
    e.emit(3, "%bw = arith.muli %by, %cWarps : index")
    e.emit(3, "%wm = arith.addi %bw, %wave : index")
    e.emit(3, "%m0 = arith.muli %wm, %cTM : index")
    e.emit(3, "%n0 = arith.muli %bx, %cTN : index")
    e.emit(3, "%arow = arith.addi %m0, %l32 : index")
    e.emit(3, "%bcol = arith.addi %n0, %l32 : index")
    e.emit(3, f"%zero = arith.constant dense<0.0> : {acc}")
    count = fm * fn
    inits = ", ".join(f"%acc{i} = %zero" for i in range(count))
    types = ", ".join([acc] * count)
    e.emit(3, f"%res:{count} = scf.for %k = %c0 to %cK step %cStep "
              f"iter_args({inits}) -> ({types}) {{")
    cur = [f"%acc{i}" for i in range(count)]
    for u in range(unroll):
        ku = e.add(4, "%k", e.const(4, 8 * u))
        kk = e.add(4, ku, "%kq")
        a = []
        for i in range(fm):
            row = e.add(4, "%arow", e.const(4, 32 * i))
            v = e.fresh("a")
            e.emit(4, f"{v} = vector.load %A[{row}, {kk}] : {mt}, {frag}")
            a.append(v)
        b = []
        for j in range(fn):
            col = e.add(4, "%bcol", e.const(4, 32 * j))
            v = e.fresh("b")
            e.emit(4, f"{v} = vector.load %Bt[{col}, {kk}] : {mt}, {frag}")
            b.append(v)
        nxt = []
        for i in range(fm):
            for j in range(fn):
                d = e.fresh("d")
                e.emit(4, f"{d} = amdgpu.mfma 32x32x8 {a[i]} * {b[j]} + {cur[i * fn + j]} "
                          f"blgp = none : {frag}, {frag}, {acc}")
                nxt.append(d)
        cur = nxt
    e.emit(4, f"scf.yield {', '.join(cur)} : {types}")
    e.emit(3, "}")
    # Lane l, element 4g+r of a 32x32 fragment: row 8g + 4(l/32) + r, col l%32.
    for i in range(fm):
        for j in range(fn):
            col = e.add(3, "%bcol", e.const(3, 32 * j))
            for g in range(4):
                part = e.fresh("p")
                lanes = ", ".join(str(4 * g + r) for r in range(4))
                e.emit(3, f"{part} = vector.shuffle %res#{i * fn + j}, %res#{i * fn + j} "
                          f"[{lanes}] : {acc}, {acc}")
                row = e.add(3, e.add(3, "%m0", e.const(3, 32 * i + 8 * g)), "%kq")
                e.emit(3, f"vector.store {part}, %Ct[{col}, {row}] : {ct}, vector<4xf32>")
    e.emit(3, "gpu.return")
    e.emit(2, "}")


def emit_nvvm_kernel(e, name, tm, tn, unroll, warps):
    """32 lanes per warp; m16n8k16 fragments."""
    if tm % 16 or tn % 8:
        raise SystemExit(f"gen_gemm.py: nvvm tile {tm}x{tn}: M must be a multiple of 16, N of 8")
    fm, fn = tm // 16, tn // 8
    acc = "vector<2x2xf32>"
    mt = f"memref<{DIM}x{DIM}xf16>"
    ct = f"memref<{DIM}x{DIM}xf32>"
    e.emit(2, f"gpu.func @{name}(%A: {mt}, %Bt: {mt}, %Ct: {ct}) kernel "
              f"attributes {{known_block_size = array<i32: {32 * warps}, 1, 1>}} {{")
    e.emit(3, "%c0 = arith.constant 0 : index")
    e.emit(3, "%c2 = arith.constant 2 : index")
    e.emit(3, "%c4 = arith.constant 4 : index")
    e.emit(3, "%c32 = arith.constant 32 : index")
    e.emit(3, f"%cK = arith.constant {DIM} : index")
    e.emit(3, f"%cStep = arith.constant {16 * unroll} : index")
    e.emit(3, f"%cTM = arith.constant {tm} : index")
    e.emit(3, f"%cTN = arith.constant {tn} : index")
    e.emit(3, f"%cWarps = arith.constant {warps} : index")
    e.emit(3, "%tid = gpu.thread_id x")
    e.emit(3, "%bx = gpu.block_id x")
    e.emit(3, "%by = gpu.block_id y")
    e.emit(3, "%lane = arith.remui %tid, %c32 : index")
    e.emit(3, "%warp = arith.divui %tid, %c32 : index")
    e.emit(3, "%g = arith.divui %lane, %c4 : index")
    e.emit(3, "%t = arith.remui %lane, %c4 : index")
    e.emit(3, "%t2 = arith.muli %t, %c2 : index")
    e.emit(3, "%bw = arith.muli %by, %cWarps : index")
    e.emit(3, "%wm = arith.addi %bw, %warp : index")
    e.emit(3, "%m0 = arith.muli %wm, %cTM : index")
    e.emit(3, "%n0 = arith.muli %bx, %cTN : index")
    e.emit(3, "%arow = arith.addi %m0, %g : index")
    e.emit(3, "%bcol = arith.addi %n0, %g : index")
    e.emit(3, f"%zero = arith.constant dense<0.0> : {acc}")
    e.emit(3, "%zA = arith.constant dense<0.0> : vector<4x2xf16>")
    e.emit(3, "%zB = arith.constant dense<0.0> : vector<2x2xf16>")
    count = fm * fn
    inits = ", ".join(f"%acc{i} = %zero" for i in range(count))
    types = ", ".join([acc] * count)
    e.emit(3, f"%res:{count} = scf.for %k = %c0 to %cK step %cStep "
              f"iter_args({inits}) -> ({types}) {{")
    cur = [f"%acc{i}" for i in range(count)]
    for u in range(unroll):
        k0 = e.add(4, e.add(4, "%k", e.const(4, 16 * u)), "%t2")
        k8 = e.add(4, k0, e.const(4, 8))
        a = []
        for i in range(fm):
            r0 = e.add(4, "%arow", e.const(4, 16 * i))
            r8 = e.add(4, r0, e.const(4, 8))
            frag = "%zA"
            # a0: (g, 2t), a1: (g+8, 2t), a2: (g, 2t+8), a3: (g+8, 2t+8)
            for slot, (row, col) in enumerate([(r0, k0), (r8, k0), (r0, k8), (r8, k8)]):
                piece = e.fresh("ap")
                e.emit(4, f"{piece} = vector.load %A[{row}, {col}] : {mt}, vector<2xf16>")
                nxt = e.fresh("af")
                e.emit(4, f"{nxt} = vector.insert {piece}, {frag} [{slot}] : vector<2xf16> into vector<4x2xf16>")
                frag = nxt
            a.append(frag)
        b = []
        for j in range(fn):
            col = e.add(4, "%bcol", e.const(4, 8 * j))
            frag = "%zB"
            for slot, kk in enumerate([k0, k8]):
                piece = e.fresh("bp")
                e.emit(4, f"{piece} = vector.load %Bt[{col}, {kk}] : {mt}, vector<2xf16>")
                nxt = e.fresh("bf")
                e.emit(4, f"{nxt} = vector.insert {piece}, {frag} [{slot}] : vector<2xf16> into vector<2x2xf16>")
                frag = nxt
            b.append(frag)
        nxt = []
        for i in range(fm):
            for j in range(fn):
                d = e.fresh("d")
                e.emit(4, f"{d} = nvgpu.mma.sync ({a[i]}, {b[j]}, {cur[i * fn + j]}) "
                          f"{{mmaShape = [16, 8, 16]}} : (vector<4x2xf16>, vector<2x2xf16>, {acc}) -> {acc}")
                nxt.append(d)
        cur = nxt
    e.emit(4, f"scf.yield {', '.join(cur)} : {types}")
    e.emit(3, "}")
    # c0: (g, 2t..2t+1), c1: (g+8, 2t..2t+1); C is stored transposed, so
    # each pair is two scalars, one per column.
    for i in range(fm):
        for j in range(fn):
            for slot in range(2):
                row = e.add(3, "%arow", e.const(3, 16 * i + 8 * slot))
                part = e.fresh("cp")
                e.emit(3, f"{part} = vector.extract %res#{i * fn + j}[{slot}] : vector<2xf32> from {acc}")
                for half in range(2):
                    col = e.add(3, e.add(3, "%n0", e.const(3, 8 * j + half)), "%t2")
                    s = e.fresh("cs")
                    e.emit(3, f"{s} = vector.extract {part}[{half}] : f32 from vector<2xf32>")
                    e.emit(3, f"memref.store {s}, %Ct[{col}, {row}] : {ct}")
    e.emit(3, "gpu.return")
    e.emit(2, "}")


def emit_host(e, kernels, warps, lanes):
    mt = f"memref<{DIM}x{DIM}xf16>"
    ct = f"memref<{DIM}x{DIM}xf32>"
    e.emit(1, f"func.func @gemm(%A: {mt}, %Bt: {mt}, %Ct: {ct}) {{")
    e.emit(2, "%c1 = arith.constant 1 : index")
    e.emit(2, f"%cT = arith.constant {warps * lanes} : index")
    for name, tm, tn in kernels:
        gx = e.const(2, DIM // tn)
        gy = e.const(2, DIM // (tm * warps))
        e.emit(2, f"gpu.launch_func @gemm_kernels::@{name} blocks in ({gx}, {gy}, %c1) "
                  f"threads in (%cT, %c1, %c1) args(%A : {mt}, %Bt : {mt}, %Ct : {ct})")
    e.emit(2, "return")
    e.emit(1, "}")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", choices=["rocdl", "nvvm"], required=True)
    p.add_argument("--tiles", default="128x128",
                   help="comma-separated per-wave/warp tiles MxN (default 128x128)")
    p.add_argument("--kernels", type=int, default=1,
                   help="kernels to emit, tiles taken in turn (default 1)")
    p.add_argument("--unroll", type=int, default=4, help="K-loop unroll (default 4)")
    p.add_argument("--warps", type=int, default=4, help="waves/warps per block (default 4)")
    p.add_argument("-o", "--output", default="-")
    args = p.parse_args(argv)
    tiles = [parse_tile(t) for t in args.tiles.split(",") if t]
    if not tiles or args.kernels < 1 or args.unroll < 1 or args.warps < 1:
        p.error("--tiles must name a tile; --kernels, --unroll, --warps must be >= 1")
    for tm, tn in tiles:
        if DIM % tn or DIM % (tm * args.warps):
            p.error(f"tile {tm}x{tn} x {args.warps} warps must divide {DIM}")

    e = Emitter()
    e.emit(0, f"// gen_gemm.py --target {args.target} --tiles {args.tiles} --kernels {args.kernels} "
              f"--unroll {args.unroll} --warps {args.warps}")
    e.emit(0, "module attributes {gpu.container_module} {")
    kernels = []
    for k in range(args.kernels):
        tm, tn = tiles[k % len(tiles)]
        kernels.append((f"gemm_{tm}x{tn}_u{args.unroll}_{k}", tm, tn))
    if args.target == "nvvm":
        emit_host(e, kernels, args.warps, 32)
    e.emit(1, "gpu.module @gemm_kernels {")
    for name, tm, tn in kernels:
        if args.target == "rocdl":
            emit_rocdl_kernel(e, name, tm, tn, args.unroll, args.warps)
        else:
            emit_nvvm_kernel(e, name, tm, tn, args.unroll, args.warps)
    e.emit(1, "}")
    e.emit(0, "}")
    text = "\n".join(e.lines) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
