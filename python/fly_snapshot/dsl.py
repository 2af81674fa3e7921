"""The entry point for a kernel DSL that lowers its kernel itself (FlyDSL's
shape): it holds the module as it stands right before gpu-module-to-binary
and wants the binary pass run once per tuning config."""

from __future__ import annotations

from typing import List, Mapping, Optional, Sequence, Union

from . import _capi
from .compiler import Compiler, HintValue, Variant
from .errors import InvalidInputError


def _target_of(chip: str) -> str:
    if ":" in chip:
        return chip
    if chip.startswith("gfx"):
        return "rocdl:" + chip
    if chip.startswith("sm_"):
        return "nvvm:" + chip
    raise InvalidInputError("chip must be gfx<...> (ROCDL), sm_<...> (NVVM) or "
                            "<family>:<chip>, got %r" % (chip,))


def compile_variants(prebinary_module_text: Union[str, bytes], binary_pass: str,
                     configs: Sequence[Mapping[str, HintValue]], chip: str, *,
                     compiler: Optional[Compiler] = None) -> List[Variant]:
    """Runs ``binary_pass`` on ``prebinary_module_text`` once per config.

    :param prebinary_module_text: the module right before the binary pass:
        gpu.modules with a #rocdl.target / #nvvm.target whose kernels are
        already llvm.func (what FlyDSL writes for FLYDSL_COMPILE_LLVM_DIR).
    :param binary_pass: the pass exactly as the DSL would run it, e.g.
        ``gpu-module-to-binary{format=fatbin opts="--amdgpu-waves-per-eu=2"}``,
        bare or inside ``builtin.module(...)``: what the library's parser
        accepts (one gpu-module-to-binary with its options).
        On ROCDL, opts flags with an IR equivalent become IR hints (a config's
        own hint wins); without ``toolkit=`` upstream looks at $ROCM_PATH.
    :param configs: hint sets, e.g. ``[{"waves_per_eu": 2}, {"maxnreg": 96}]``.
    :param chip: ``gfx942``, ``sm_90`` or ``rocdl:gfx942``; part of the cache
        key.
    :param compiler: reuse a Compiler (and its cache); default: a new one
        with crash isolation on.
    :returns: one Variant per config (registers, spills, scratch, occupancy,
        objects, status, error), in order. A config whose compile fails or
        crashes fails only its own Variant.
    """
    if not isinstance(binary_pass, str):
        raise InvalidInputError("binary_pass must be a str (one gpu-module-to-binary{...} "
                                "pass), got %s" % type(binary_pass).__name__)
    # The library's parser (fly::parseBinaryPass) decides, and its printed
    # spelling is what the compile is given.
    printed = _capi.check_binary_pass(binary_pass)
    if printed is None:
        raise InvalidInputError(_capi.last_error())
    target = _target_of(chip)
    own = compiler is None
    compiler = compiler or Compiler()
    try:
        with compiler.compile(prebinary_module_text,
                              pipeline="builtin.module(%s)" % printed,
                              target=target, hint_sets=list(configs)) as result:
            return list(result.variants)
    finally:
        if own:
            compiler.close()
