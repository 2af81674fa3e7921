"""Exceptions raised by fly_snapshot."""

from __future__ import annotations



class FlyError(Exception):
    """Base class of every error fly_snapshot raises on purpose."""


class LibraryNotFoundError(FlyError, OSError):
    """libFlySnapshotCAPI.so is neither in the package nor where it was
    recorded at build or install time."""


class InvalidInputError(FlyError, ValueError):
    """An argument was rejected before anything compiled: bad compiler
    options, a malformed hint set, an unknown target."""


class CompileError(FlyError, ValueError):
    """The compile as a whole failed: the source does not parse, the
    pipeline is malformed or has no gpu-module-to-binary, a hint does not
    apply to the target, the pipeline before the binary pass failed. The
    library's diagnostics (located, one per line) are in ``diagnostics``.
    A single variant failing is not an exception: see ``Variant.error``."""

    def __init__(self, diagnostics: str) -> None:
        super().__init__(diagnostics)
        self.diagnostics = diagnostics


__all__ = ["FlyError", "InvalidInputError", "CompileError", "LibraryNotFoundError"]
