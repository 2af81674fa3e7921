"""What a hint is, from the hint registry (include/fly/Hints/HintRegistry.h):
its name, the type and range of its value, whether it takes a selector.

The library owns the registry; the package carries it as
``_hint_specs.json`` beside this file, written from the same registry by
``fly-hint-doc --hint-specs-json`` (``scripts/update-hint-table.sh``).
test/Tools/hint-specs-json.test and test_hints.py fail while the file and
the library's ``flyGetHintSpecsJSON()`` differ. Reading an out-dir
(``read_out_dir``) so never loads LLVM; the library is asked only where the
file is missing.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from . import _capi, _files

_SPECS_FILE = Path(__file__).resolve().with_name("_hint_specs.json")

# `first[selector]rest`, as HintSet.h's splitHintName takes it apart: the
# first word (no dot), a selector of letters, digits and `_`, then nothing
# or a dotted rest without brackets.
_SELECTOR_NAME = re.compile(r"([^.\[\]]+)\[([A-Za-z0-9_]+)\]((?:\.[^\[\]]*)?)\Z")


@functools.lru_cache(maxsize=None)
def hint_specs() -> Tuple[Dict[str, Any], ...]:
    """Every hint spec, as flyGetHintSpecsJSON (include/fly-c/FlySnapshot.h)
    describes it: ``name``, ``prefix``, ``type``, ``min``/``max``,
    ``selector``, ``families``."""
    try:
        text = _SPECS_FILE.read_bytes()
    except OSError:  # a package without its data files
        text = _capi.lib().flyGetHintSpecsJSON()
    return tuple(_files.loads_bounded(text.decode(), "hint specs"))


def split_hint_name(key: str) -> Optional[Tuple[str, str]]:
    """``(base, selector)`` of a hint name: ``target[gfx90a].O`` ->
    ``("target.O", "gfx90a")``, ``O[gfx942]`` -> ``("O", "gfx942")``,
    ``maxnreg`` -> ``("maxnreg", "")``; None for malformed brackets."""
    if "[" not in key:
        return None if "]" in key else (key, "")
    match = _SELECTOR_NAME.match(key)
    if not match:
        return None
    return match.group(1) + match.group(3), match.group(2)


def find_hint_spec(base: str) -> Optional[Dict[str, Any]]:
    """The spec of a hint name without its selector: an exact name, or a
    family's prefix (``func.``) followed by a field; None if unknown."""
    for spec in hint_specs():
        name = spec["name"]
        if spec["prefix"]:
            if base.startswith(name) and len(base) > len(name):
                return spec
        elif base == name:
            return spec
    return None


def hint_type(key: str) -> Optional[str]:
    """``int``, ``bool``, ``attribute`` or ``string`` for a hint name, its
    selector (if any) ignored; None for a name the registry does not know."""
    name = split_hint_name(key)
    spec = find_hint_spec(name[0]) if name else None
    return spec["type"] if spec else None
