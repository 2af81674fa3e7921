"""examples/python/autotune.py runs end to end: without a GPU fly-run says
'no device' (77) and the static ranking stands; spilling configs are pruned."""

import json
import subprocess
import sys

import pytest

from conftest import SRC_DIR, TOOLS_DIR


def test_autotune_ranks_and_prunes(rocdl, tmp_path):
    script = SRC_DIR / "examples" / "python" / "autotune.py"
    configs = [{}, {"waves_per_eu": 4}, {"waves_per_eu": 8}, {"maxnreg": 96}]
    proc = subprocess.run(
        [sys.executable, str(script), "--configs", json.dumps(configs),
         "--fly-run", str(TOOLS_DIR / "fly-run"), "--out-dir", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "4 configs compiled (rocdl:gfx942)" in out
    ranked = out.split("left after pruning", 1)[1]
    # waves_per_eu=4 and 8 spill on tile_matmul: pruned.
    assert "waves_per_eu" not in ranked
    assert "(default)" in ranked
    assert "static pick" in out or "winner:" in out
