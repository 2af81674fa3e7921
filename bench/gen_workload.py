#!/usr/bin/env python3
"""Emits a gpu-dialect MLIR workload for fly-bench.

Three knobs, so that both regimes can be produced:

  --kernels K   number of gpu.func kernels (spread over --gpu-modules modules)
  --rows R --vec V
                work per kernel: every thread keeps an R x V register tile of
                accumulators (R vector<V x f32>) across a 1024-step K loop, as
                examples/tile_matmul.mlir does with R=8, V=16. Bigger tiles
                mean more registers, more spills under limits, longer codegen.
  --fold F      foldable IR per kernel, as a DSL front end emits it: F steps of
                redundant index arithmetic (x+0, x*1, (x+c)-c, index_cast
                round trips, select on a constant true, constant-folding
                chains), duplicated constants and pure recomputations (cse),
                and dead ops. The prefix (canonicalize,cse repeated) removes
                all of it, so it costs prefix time only: the pre-binary
                module is the same with F=0 or F=10000.

F=0 and a big tile gives a backend-dominated workload (most time in
gpu-module-to-binary); a small tile and a large F a prefix-dominated one.
Output is deterministic for given arguments (--seed).
"""

import argparse
import random
import sys


class Emitter:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.counter = 0

    def fresh(self, stem="t"):
        self.counter += 1
        return f"%_{stem}{self.counter}"

    def emit(self, indent, text):
        self.lines.append("  " * indent + text)

    def noise(self, indent, value, steps, base):
        """Returns a name equal to `value` after `steps` foldable steps."""
        rng = self.rng
        v = value
        for _ in range(steps):
            kind = rng.randrange(8)
            if kind == 0:  # duplicated zero constant, x + 0
                z = self.fresh("z")
                n = self.fresh("v")
                self.emit(indent, f"{z} = arith.constant 0 : index")
                self.emit(indent, f"{n} = arith.addi {v}, {z} : index")
                v = n
            elif kind == 1:  # x * 1
                o = self.fresh("one")
                n = self.fresh("v")
                self.emit(indent, f"{o} = arith.constant 1 : index")
                self.emit(indent, f"{n} = arith.muli {v}, {o} : index")
                v = n
            elif kind == 2:  # (x + c) - c
                c = self.fresh("c")
                t = self.fresh("t")
                n = self.fresh("v")
                self.emit(indent, f"{c} = arith.constant {rng.randrange(1, 4096)} : index")
                self.emit(indent, f"{t} = arith.addi {v}, {c} : index")
                self.emit(indent, f"{n} = arith.subi {t}, {c} : index")
                v = n
            elif kind == 3:  # index_cast round trip
                i = self.fresh("i")
                n = self.fresh("v")
                self.emit(indent, f"{i} = arith.index_cast {v} : index to i64")
                self.emit(indent, f"{n} = arith.index_cast {i} : i64 to index")
                v = n
            elif kind == 4:  # select on a constant condition
                t = self.fresh("true")
                j = self.fresh("junk")
                n = self.fresh("v")
                self.emit(indent, "%s = arith.constant true" % t)
                self.emit(indent, f"{j} = arith.muli {v}, {base} : index")
                self.emit(indent, f"{n} = arith.select {t}, {v}, {j} : index")
                v = n
            elif kind == 5:  # constant-folding chain that yields 0
                a = rng.randrange(1, 100)
                b = rng.randrange(1, 100)
                ca, cb, p, q, d = (self.fresh("k") for _ in range(5))
                n = self.fresh("v")
                self.emit(indent, f"{ca} = arith.constant {a} : index")
                self.emit(indent, f"{cb} = arith.constant {b} : index")
                self.emit(indent, f"{p} = arith.muli {ca}, {cb} : index")
                self.emit(indent, f"{q} = arith.constant {a * b} : index")
                self.emit(indent, f"{d} = arith.subi {p}, {q} : index")
                self.emit(indent, f"{n} = arith.addi {v}, {d} : index")
                v = n
            elif kind == 6:  # dead code
                d1 = self.fresh("dead")
                d2 = self.fresh("dead")
                d3 = self.fresh("dead")
                self.emit(indent, f"{d1} = arith.muli {v}, {base} : index")
                self.emit(indent, f"{d2} = arith.addi {d1}, {v} : index")
                self.emit(indent, f"{d3} = arith.remui {d2}, {base} : index")
            else:  # pure recomputation (cse) folded back in: x + (y - y)
                r1 = self.fresh("r")
                r2 = self.fresh("r")
                d = self.fresh("r")
                n = self.fresh("v")
                self.emit(indent, f"{r1} = arith.muli {base}, {base} : index")
                self.emit(indent, f"{r2} = arith.muli {base}, {base} : index")
                self.emit(indent, f"{d} = arith.subi {r1}, {r2} : index")
                self.emit(indent, f"{n} = arith.addi {v}, {d} : index")
                v = n
        return v


def emit_kernel(e, k, rows, vec, fold):
    vt = f"vector<{vec}xf32>"
    mt = "memref<1024x1024xf32>"
    e.emit(2, f"gpu.func @kernel_{k}(%A: {mt}, %B: {mt}, %C: {mt}) kernel {{")
    e.emit(3, "%c0 = arith.constant 0 : index")
    e.emit(3, "%c1 = arith.constant 1 : index")
    # Kernels differ a little (trip count), so none is a copy of another.
    e.emit(3, f"%cK = arith.constant {1024 - (k % 16)} : index")
    e.emit(3, f"%cR = arith.constant {rows} : index")
    e.emit(3, f"%cV = arith.constant {vec} : index")
    e.emit(3, "%tx = gpu.thread_id x")
    e.emit(3, "%ty = gpu.thread_id y")
    e.emit(3, "%row0 = arith.muli %ty, %cR : index")
    e.emit(3, "%col0 = arith.muli %tx, %cV : index")
    # Most of the foldable IR sits in the kernel body; a fraction inside the
    # loop, where it is also loop-invariant.
    outer = fold - fold // 4
    row = e.noise(3, "%row0", outer // 2, "%cR")
    col = e.noise(3, "%col0", outer - outer // 2, "%cV")
    e.emit(3, f"%zero = arith.constant dense<0.0> : {vt}")
    accs = ", ".join(f"%acc{r} = %zero" for r in range(rows))
    types = ", ".join([vt] * rows)
    e.emit(3, f"%res:{rows} = scf.for %k = %c0 to %cK step %c1 "
              f"iter_args({accs}) -> ({types}) {{")
    kk = e.noise(4, "%k", fold // 4, "%cV")
    e.emit(4, f"%b = vector.load %B[{kk}, {col}] : {mt}, {vt}")
    for r in range(rows):
        e.emit(4, f"%ri{r} = arith.constant {r} : index")
        e.emit(4, f"%row{r}x = arith.addi {row}, %ri{r} : index")
        e.emit(4, f"%a{r} = memref.load %A[%row{r}x, %k] : {mt}")
        e.emit(4, f"%ab{r} = vector.broadcast %a{r} : f32 to {vt}")
        e.emit(4, f"%n{r} = vector.fma %ab{r}, %b, %acc{r} : {vt}")
    e.emit(4, "scf.yield " + ", ".join(f"%n{r}" for r in range(rows)) + f" : {types}")
    e.emit(3, "}")
    for r in range(rows):
        e.emit(3, f"%ci{r} = arith.constant {r} : index")
        e.emit(3, f"%crow{r} = arith.addi {row}, %ci{r} : index")
        e.emit(3, f"vector.store %res#{r}, %C[%crow{r}, {col}] : {mt}, {vt}")
    e.emit(3, "gpu.return")
    e.emit(2, "}")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", type=int, default=1)
    p.add_argument("--gpu-modules", type=int, default=1,
                   help="gpu.modules the kernels are spread over (default 1)")
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--vec", type=int, default=16)
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--output", default="-")
    args = p.parse_args(argv)
    if args.kernels < 1 or args.rows < 1 or args.vec < 1 or args.gpu_modules < 1:
        p.error("--kernels, --rows, --vec and --gpu-modules must be >= 1")
    modules = min(args.gpu_modules, args.kernels)

    e = Emitter(random.Random(args.seed))
    e.emit(0, f"// gen_workload.py --kernels {args.kernels} --gpu-modules {modules} "
              f"--rows {args.rows} --vec {args.vec} --fold {args.fold} --seed {args.seed}")
    e.emit(0, "module attributes {gpu.container_module} {")
    for m in range(modules):
        e.emit(1, f"gpu.module @kernels_{m} {{")
        for k in range(m, args.kernels, modules):
            emit_kernel(e, k, args.rows, args.vec, args.fold)
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
