#!/usr/bin/env python3
"""The config-space sweep of scaling.py (4 ROCDL GEMMs x 16 hint sets) as
naive parallel, one fly-tune sweep in three settings and one fly-tune per
kernel at --jobs=4, side by side in rounds (bench/node-turns/README.md).
  modes.py FLY_TUNE ROCM_TOOLKIT WORK ROUNDS"""
import json, os, resource, subprocess, sys, time, glob, shutil
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import scaling
tune, toolkit, work, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.makedirs(work, exist_ok=True)
tiles = ["64x64", "64x128", "128x128", "128x256"]
ks = []
for t in tiles:
    k = f"{work}/cfg-{t}.mlir"
    if not os.path.exists(k):
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "gen_gemm.py"),
                        "--target", "rocdl", "--tiles", t, "--unroll", "8", "-o", k], check=True)
    ks.append(k)
hs = scaling.hint_sets("rocdl", 16)
json.dump(hs, open(f"{work}/h16.json", "w"))
for i, h in enumerate(hs):
    json.dump([h], open(f"{work}/h1-{i}.json", "w"))
def fly(inps, hints, jobs, out, env=None):
    return ([tune, *inps, "--target=rocdl:gfx942", f"--toolkit={toolkit}", f"--hints-file={hints}",
             f"--jobs={jobs}", f"--out-dir={out}", "--no-cache", "--quiet"], env)
def cont(out):
    c = n = 0
    for m in glob.glob(f"{out}/**/manifest.json", recursive=True):
        for v in json.load(open(m))["variants"]:
            n += 1; c += (v.get("codegen_continued") or 0) > 0
    return c
def measure(cmds, p):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    def one(c):
        e = dict(os.environ); e.update(c[1] or {})
        return subprocess.run(c[0], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
    with ThreadPoolExecutor(p) as ex:
        rcs = list(ex.map(one, cmds))
    t = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return t, cpu, sum(1 for r in rcs if r)
def modes():
    m = {}
    m["naive-par"] = lambda: ([fly([k], f"{work}/h1-{i}.json", 1, f"{work}/n-{j}-{i}") for j, k in enumerate(ks) for i in range(16)], 16, f"{work}/n-*")
    m["sweep16"] = lambda: ([fly(ks, f"{work}/h16.json", 16, f"{work}/s16")], 1, f"{work}/s16")
    m["sweep16-fifo"] = lambda: ([fly(ks, f"{work}/h16.json", 16, f"{work}/s16f", {"FLY_KERNEL_TURNS": "0"})], 1, f"{work}/s16f")
    m["sweep16-nocut"] = lambda: ([fly(ks, f"{work}/h16.json", 16, f"{work}/s16n", {"FLY_ROCDL_CODEGEN_CUT": "0"})], 1, f"{work}/s16n")
    m["4proc-j4"] = lambda: ([fly([k], f"{work}/h16.json", 4, f"{work}/p4-{j}") for j, k in enumerate(ks)], 4, f"{work}/p4-*")
    return m
res = {}
names = list(modes().keys())
for rep in range(reps):
    order = names if rep % 2 == 0 else names[::-1]
    for name in order:
        cmds, p, pat = modes()[name]()
        for d in glob.glob(pat): shutil.rmtree(d, ignore_errors=True)
        t, cpu, failed = measure(cmds, p)
        c = sum(cont(d) for d in glob.glob(pat))
        res.setdefault(name, []).append((round(t, 3), round(cpu, 2), c, failed))
        print(rep, name, f"wall {t:.2f} cpu {cpu:.2f} continued {c} failed {failed}", flush=True)
json.dump(res, open(f"{work}/res.json", "w"), indent=1)
base = res["naive-par"]
for name, rs in res.items():
    ws = sorted(r[0] for r in rs); cs = sorted(r[1] for r in rs)
    print(f"{name:16s} wall med {ws[len(ws)//2]:.2f} cpu med {cs[len(cs)//2]:.2f} x par {sorted(b[0] for b in base)[len(base)//2]/ws[len(ws)//2]:.2f} cont {[r[2] for r in rs]}")
