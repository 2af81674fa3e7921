"""compile_variants: FlyDSL's shape (pre-binary module + binary pass +
configs)."""

import pytest

from fly_snapshot import InvalidInputError, compile_variants


def test_configs_become_variants(rocdl, prebinary, toolkit):
    variants = compile_variants(
        prebinary, "gpu-module-to-binary{format=fatbin toolkit=%s}" % toolkit,
        [{}, {"waves_per_eu": 4}, {"maxnreg": 64}], "gfx942", compiler=rocdl)
    assert [v.status for v in variants] == ["ok"] * 3
    regs = [v.kernels[0].registers for v in variants]
    assert regs[1] <= 128 < regs[0] and regs[2] <= 128
    assert variants[1].kernels[0].spills > 0


def test_opts_flags_become_hints(rocdl, prebinary, toolkit):
    """FlyDSL's flags in opts= (ignored by upstream ROCDL serialization)
    reach the backend as IR hints: the same registers as the hint set."""
    by_opts = compile_variants(
        prebinary, 'gpu-module-to-binary{format=fatbin toolkit=%s '
                   'opts="--amdgpu-waves-per-eu=4 --amdgpu-num-vgpr=64"}' % toolkit,
        [{}], "rocdl:gfx942", compiler=rocdl)
    by_hints = compile_variants(
        prebinary, "gpu-module-to-binary{format=fatbin toolkit=%s}" % toolkit,
        [{"waves_per_eu": 4, "maxnreg": 64}], "gfx942", compiler=rocdl)
    plain = compile_variants(
        prebinary, "gpu-module-to-binary{format=fatbin toolkit=%s}" % toolkit,
        [{}], "gfx942", compiler=rocdl)
    got = by_opts[0].kernels[0]
    want = by_hints[0].kernels[0]
    assert (got.registers, got.spills) == (want.registers, want.spills)
    assert got.registers < plain[0].kernels[0].registers
    # A config's own hint wins over the flag.
    over = compile_variants(
        prebinary, 'gpu-module-to-binary{format=fatbin toolkit=%s '
                   'opts="--amdgpu-waves-per-eu=4"}' % toolkit,
        [{"waves_per_eu": 8}], "gfx942", compiler=rocdl)
    assert over[0].kernels[0].registers <= 64


@pytest.mark.parametrize("binary_pass", [
    "canonicalize", "gpu-module-to-binary,cse", "canonicalize,gpu-module-to-binary", "",
    "builtin.module(gpu-module-to-binary,cse)"])
def test_binary_pass_must_be_one_binary_pass(binary_pass):
    # The library's parser refuses it, in its own words.
    with pytest.raises(InvalidInputError) as refused:
        compile_variants("module {}", binary_pass, [{}], "gfx942")
    assert str(refused.value) == ("binary pass must be exactly one gpu-module-to-binary "
                                  "(with its options), got '%s'" % binary_pass)


def test_binary_pass_unknown_option_is_the_parsers_message():
    with pytest.raises(InvalidInputError) as refused:
        compile_variants("module {}", "gpu-module-to-binary{bogus=1}", [{}], "gfx942")
    assert str(refused.value) == ("cannot parse binary pass 'gpu-module-to-binary{bogus=1}': "
                                  "<Pass-Options-Parser>: no such option bogus")
    with pytest.raises(InvalidInputError, match="unknown format 'elf'"):
        compile_variants("module {}", "gpu-module-to-binary{format=elf}", [{}], "gfx942")


@pytest.mark.parametrize("binary_pass", [None, b"gpu-module-to-binary", 3])
def test_binary_pass_must_be_str(binary_pass):
    with pytest.raises(InvalidInputError, match="binary_pass must be a str"):
        compile_variants("module {}", binary_pass, [{}], "gfx942")


@pytest.mark.parametrize("binary_pass", [
    "gpu-module-to-binary", " gpu-module-to-binary{format=isa} ",
    "builtin.module(gpu-module-to-binary{format=isa})"])
def test_binary_pass_spellings_the_library_accepts(binary_pass):
    """What C++ accepts (fly::parseBinaryPass: bare or anchored) passes the
    check; the next check (the chip) is what fails."""
    with pytest.raises(InvalidInputError, match="chip must be"):
        compile_variants("module {}", binary_pass, [{}], "tpu3")


def test_anchored_binary_pass_compiles_as_the_bare_one(rocdl, prebinary, toolkit):
    bare = "gpu-module-to-binary{format=fatbin toolkit=%s}" % toolkit
    by_bare = compile_variants(prebinary, bare, [{"waves_per_eu": 4}], "gfx942",
                               compiler=rocdl)
    by_anchored = compile_variants(prebinary, "builtin.module(%s)" % bare,
                                   [{"waves_per_eu": 4}], "gfx942", compiler=rocdl)
    assert [v.status for v in by_bare + by_anchored] == ["ok"] * 2
    assert by_anchored[0].objects[0].data == by_bare[0].objects[0].data


def test_chip_spelling():
    with pytest.raises(InvalidInputError, match="chip must be"):
        compile_variants("module {}", "gpu-module-to-binary", [{}], "tpu3")


def test_opts_flags_are_reported(rocdl, prebinary, toolkit):
    """Each flag says what became of it: a note for a hint, a warning for a
    flag ROCDL ignores and that has no IR equivalent."""
    pipeline = ('builtin.module(gpu-module-to-binary{format=fatbin toolkit=%s '
                'opts="--amdgpu-waves-per-eu=4 --amdgpu-bogus"})' % toolkit)
    with rocdl.compile(prebinary, pipeline=pipeline, hint_sets=[{}]) as result:
        assert result[0].ok
        assert "'--amdgpu-waves-per-eu=4' is ignored by ROCDL serialization; " \
               "fly applies it as the hint waves_per_eu=4" in result.diagnostics
        assert "'--amdgpu-bogus' has no effect" in result.diagnostics
