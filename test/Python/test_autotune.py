"""fly_snapshot.autotune on the stand-in CUDA driver: config spaces, the
winner by the fake clock, prune, the numerics rule, the correctness gate,
restore of in-place outputs, and the on-disk winner cache."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from fly_snapshot import InvalidInputError, autotune as at

from conftest import SRC_DIR
# Fixtures: fake_device, nvvm.
from runtime_fixtures import fake_device, nvvm  # noqa: F401,F811
from runtime_fixtures import (FAKE_LIBCUDA, SCALE_1D, SCALE_1D_F64, counters, fake_ms,
                              launch_scale, scale_inputs)

CONFIGS = {"f32": SCALE_1D, "f64": SCALE_1D_F64}


def expected(n=1000):
    return [2 * i * 0.5 + 1 for i in range(n)]


class Ticks:
    """An injected clock: one tick per reading."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        self.now += 1
        return float(self.now)


def test_hint_space_is_cartesian_and_counted_first():
    space = at.hint_space({"maxnreg": [None, 64, 128], "O": [2, 3]})
    assert len(space) == 6
    assert space[0] == {"O": 2} and {"maxnreg": 128, "O": 3} in space
    assert at.hint_space([{"maxnreg": [32, 64]}, {"maxnreg": 64}, {}]) == [
        {"maxnreg": 32}, {"maxnreg": 64}, {}]
    assert at.hint_space(None) == [{}]
    with pytest.raises(InvalidInputError, match="dict of lists"):
        at.hint_space(["maxnreg=32"])


def test_numerics_changing_hints():
    assert at.changes_numerics({"fast_fp_math": True}) == "fast_fp_math=True"
    assert at.changes_numerics({"unsafe_fp_math[gfx942]": 1}) == "unsafe_fp_math[gfx942]=1"
    assert at.changes_numerics({"fast_fp_math": False, "maxnreg": 32}) is None


def test_static_rank_never_prefers_fast_math(nvvm):
    variants = nvvm.compile(SCALE_1D, target="nvvm:sm_90",
                            hint_sets=[{"fast_fp_math": True}, {}]).variants
    assert all(v.ok for v in variants)
    assert [v.hints for v in at.static_rank(variants)] == [{}]
    assert len(at.static_rank(variants, allow_numerics_change=True)) == 2


def make_tuner(tmp_path, **options):
    # O=0 doubles scale_1d's registers (so its fake time differs); maxnreg=32
    # is more than it uses (the same object).
    defaults = dict(launch=launch_scale, hint_sets={"maxnreg": [None, 32], "O": [None, 0]},
                    target="nvvm:sm_90", outputs=[1], warmup=2, rep=8,
                    flush_bytes=1 << 16, cache_dir=tmp_path / "winners",
                    compiler=options.pop("compiler"))
    configs = options.pop("configs", CONFIGS)
    defaults.update(options)
    return at.autotune("scale", configs, **defaults)


def registers(result):
    return {(c.kernel, json.dumps(c.hints)): c.variant.kernels[0].registers
            for c in result.candidates if c.variant and c.variant.ok}


def test_autotune_picks_the_fastest_checked_variant(fake_device, nvvm, tmp_path):
    tuner = make_tuner(tmp_path, compiler=nvvm, clock=Ticks(),
                       hint_sets=[{"maxnreg": [None, 32], "O": [None, 0]},
                                  {"fast_fp_math": True}],
                       reference=lambda x, y: expected(x.shape[0]),
                       restore_value=[1])
    x, y = scale_inputs()
    result = tuner.tune(x, y)
    by = {(c.kernel, json.dumps(c.hints)): c for c in result.candidates}
    # 2 kernels x 5 hint sets; the fast-math ones never compiled.
    assert len(result.candidates) == 10
    assert {c.status for c in result.by_status("numerics")} == {"numerics"}
    assert len(result.by_status("numerics")) == 2
    regs = registers(result)
    timed = result.by_status("timed")
    assert timed, [c.to_json() for c in result.candidates]
    for c in timed:
        # The fake clock: exactly the driver's time for its register count.
        assert c.timing.median == pytest.approx(fake_ms(c.variant.kernels[0].registers))
    assert len({regs[k] for k in regs}) > 1, regs
    fastest = min(fake_ms(regs[k]) for k in regs if by[k].status == "timed")
    assert result.winner.timing.median == pytest.approx(fastest)
    assert result.winner.hints.get("O") == 0  # 21 registers: the fake's fastest
    assert result.winner.status == "timed"
    # maxnreg=32 is above what scale_1d needs: the same object, not timed twice.
    for kernel in CONFIGS:
        a, b = by[(kernel, "{}")], by[(kernel, '{"maxnreg": 32}')]
        if a.object_sha256 == b.object_sha256:
            assert b.status == "duplicate"
    # Streaming: the first variant was timed before the tune ended.
    assert result.first_timed_s < result.total_s
    # restore_value: y is as it was before tuning.
    assert y.tolist() == [-7.0] * 1000
    # The tuner launches the winner.
    tuner(x, y)
    fake_device.synchronize()
    assert y.tolist() == expected()


def test_wrong_outputs_never_win(fake_device, nvvm, tmp_path, monkeypatch):
    x, y = scale_inputs()
    # Against the default variant (no reference function) this time.
    first = make_tuner(tmp_path, compiler=nvvm, use_cache=False).tune(x, y)
    assert first.by_status("reference")
    assert first.winner.hints.get("O") == 0
    # The fastest variants (O=0) now compute one wrong element.
    o0_regs = first.winner.variant.kernels[0].registers
    assert o0_regs != registers(first)[("f32", "{}")]
    monkeypatch.setenv("FAKE_CUDA_WRONG_REGS", str(o0_regs))
    result = make_tuner(tmp_path, compiler=nvvm, use_cache=False).tune(x, y)
    wrong = result.by_status("wrong")
    assert {c.kernel for c in wrong} == {"f32", "f64"}
    assert all(c.hints.get("O") == 0 and c.timing is None for c in wrong)
    assert not [c for c in result.candidates if c.hints.get("O") == 0 and c.timing]
    assert "argument 1: 1 of 1000 elements differ (max |diff| 1; first [0]: 2.0, expected 1.0)" \
        == wrong[0].reason
    assert result.winner.hints.get("O") is None


def test_prune_sees_the_report_before_anything_runs(fake_device, nvvm, tmp_path):
    seen = []

    def prune(variant, meta):
        seen.append(variant.kernels[0].registers)
        return "pruned for the test" if variant.id.startswith("v0") else False

    x, y = scale_inputs()
    launches = counters()[0]
    result = make_tuner(tmp_path, compiler=nvvm, prune=prune, use_cache=False,
                        hint_sets={"maxnreg": [None]},
                        reference=lambda x, y: expected()).tune(x, y)
    assert all(r > 0 for r in seen)
    assert {c.kernel for c in result.by_status("pruned")} == {"f32", "f64"}
    assert result.winner is None
    assert counters()[0] == launches


def test_meta_parameters_drive_the_launch(fake_device, nvvm, tmp_path):
    # One MLIR source, two launch configs: not duplicates of each other.
    tuner = make_tuner(tmp_path, compiler=nvvm, use_cache=False,
                       configs=[{"BLOCK": 128}, {"BLOCK": 512}], source=lambda meta: SCALE_1D,
                       hint_sets=None, reference=lambda x, y: expected())
    result = tuner.tune(*scale_inputs())
    assert sorted(c.kernel for c in result.by_status("timed")) == ["BLOCK=128", "BLOCK=512"]
    # Equal times: the earlier config wins, whatever order they compiled in.
    assert result.winner.kernel == "BLOCK=128"


CHILD = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [p for p in sys.argv[1:3] if p]
    from fly_snapshot import Compiler, autotune as at
    from runtime_fixtures import SOURCES, launch_scale, scale_inputs
    with Compiler(jobs=2, cache_dir=sys.argv[4] + "/cache") as c:
        tuner = at.autotune("scale", {k: SOURCES[v] for k, v in json.loads(sys.argv[3]).items()},
                            launch=launch_scale, hint_sets=None, target="nvvm:sm_90",
                            outputs=[1], warmup=1, rep=4, flush_bytes=1 << 16,
                            cache_dir=sys.argv[4] + "/winners", compiler=c,
                            function="scale_1d")
        r = tuner.tune(*scale_inputs())
        print(json.dumps({"from_cache": r.from_cache, "note": r.cache_note,
                          "winner": r.winner.kernel,
                          "timed": [c.kernel for c in r.candidates if c.timing]}))
""")


def test_winner_cache_across_processes(fake_device, nvvm, tmp_path):
    def child(configs):
        env = dict(os.environ, FLY_LIBCUDA=os.fspath(FAKE_LIBCUDA))
        out = subprocess.run(
            [sys.executable, "-c", CHILD, os.environ.get("PYTHONPATH", ""),
             str(SRC_DIR / "test" / "Python"), json.dumps(configs), str(tmp_path)],
            capture_output=True, text=True, env=env, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.splitlines()[-1])

    configs = {"f32": "f32", "f64": "f64"}
    first = child(configs)
    assert not first["from_cache"] and sorted(first["timed"]) == ["f32", "f64"]
    # A later process: the winner's object is unchanged, nothing is timed.
    assert child(configs) == {"from_cache": True, "note": "", "winner": first["winner"],
                              "timed": []}
    # The winner's module gains a kernel: another object, so it tunes again.
    changed = dict(configs, **{first["winner"]: first["winner"] + "+unused"})
    third = child(changed)
    assert not third["from_cache"]
    assert third["note"] == "cache entry invalidated: the winner's object changed"
    assert sorted(third["timed"]) == ["f32", "f64"]


def test_unusable_config_lists(tmp_path):
    with pytest.raises(InvalidInputError, match="source=lambda"):
        at.kernel_configs([{"BLOCK": 1}])
    with pytest.raises(InvalidInputError, match="unique"):
        at.kernel_configs([at.KernelConfig("a", {}, ""), at.KernelConfig("a", {}, "")])


def test_h200_script_runs_on_the_fake_driver(fake_device, nvvm, tmp_path):
    # examples/h200/autotune.py without a GPU: the scale family (the
    # stand-in driver runs scale_1d), the pool of full compiles and the
    # streaming sweep side by side; both pick the same checked winner.
    out = subprocess.run(
        [sys.executable, str(SRC_DIR / "examples" / "h200" / "autotune.py"), "--family", "scale",
         "--fake-driver", os.fspath(FAKE_LIBCUDA), "--jobs", "2", "--modes", "b,c",
         "--size", "1000", "--warmup", "1", "--rep", "3", "--flush-bytes", "65536",
         "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "out" / "autotune.json").read_text())
    assert report["configs"] == 32 and report["kernel_variants"] == 4
    modes = {m["mode"]: m for m in report["modes"]}
    assert set(modes) == {"(b) 2 processes full", "(c) fly-snapshot"}
    assert all(m["timed"] == 32 and m["first_timed_s"] <= m["wall_s"] for m in modes.values())
    # Ties (equal fake times) may go to either: the times agree.
    assert len({m["winner"]["median_ms"] for m in modes.values()}) == 1
    assert "| (c) fly-snapshot |" in (tmp_path / "out" / "autotune.md").read_text()


def test_unreadable_winner_cache_is_retuned(fake_device, nvvm, tmp_path):
    x, y = scale_inputs()
    first = make_tuner(tmp_path, compiler=nvvm, hint_sets=None).tune(x, y)
    (entry,) = (tmp_path / "winners").iterdir()
    entry.write_text("{not json")
    again = make_tuner(tmp_path, compiler=nvvm, hint_sets=None).tune(x, y)
    assert not again.from_cache and "unusable" in again.cache_note
    assert again.winner.object_sha256 == first.winner.object_sha256
    # Rewritten: the next tuner reuses it.
    assert make_tuner(tmp_path, compiler=nvvm, hint_sets=None).tune(x, y).from_cache


def test_one_sweep_when_the_compiler_has_it(fake_device, nvvm, tmp_path):
    # Compiler.sweep(kernels, hint_sets=, target=, pipeline=, variant_timeout=,
    # time_budget=) yields Variants with .kernel; autotune makes one call
    # with every kernel and passes the limits on. Here a sweep built from
    # compile() stands in for the library's.
    calls = []

    class WithKernel:
        def __init__(self, kernel, variant):
            self.kernel, self._variant = kernel, variant

        def __getattr__(self, name):
            return getattr(self._variant, name)

    class SweepingCompiler:
        def __init__(self, compiler):
            self.compiler = compiler

        def preset_pipeline(self, target):
            return self.compiler.preset_pipeline(target)

        def sweep(self, kernels, hint_sets, target, pipeline=None, **limits):
            calls.append((sorted(kernels), len(hint_sets), limits))
            for name, source in reversed(list(kernels.items())):
                for v in self.compiler.compile(source, target=target, pipeline=pipeline,
                                               hint_sets=hint_sets):
                    yield WithKernel(name, v)

    result = make_tuner(tmp_path, compiler=SweepingCompiler(nvvm), use_cache=False,
                        variant_timeout=30, time_budget=600,
                        reference=lambda x, y: expected()).tune(*scale_inputs())
    assert calls == [(["f32", "f64"], 4, {"variant_timeout": 30, "time_budget": 600})]
    # Results are keyed by the sweep's kernel names, in its order.
    assert [c.kernel for c in result.candidates][:4] == ["f64"] * 4
    # f32 and f64 take the same fake time: the earlier config wins although
    # f64 came first.
    assert (result.winner.kernel, result.winner.hints) == ("f32", {"O": 0})
