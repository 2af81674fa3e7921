"""ctypes declarations of the C API (include/fly-c/FlySnapshot.h) and the
lookup of libFlySnapshotCAPI.so.

The library is found without environment variables, in this order:

1. a copy inside the package, in ``lib/`` (a wheel built by
   ``pip install ./python`` carries one, with ``bin/fly-tune`` for the
   library's out-of-process crash isolation),
2. the path recorded in ``_locations.json`` beside this file (written by
   CMake for the build tree and for ``cmake --install``; a relative path is
   relative to this package, so an installed prefix stays relocatable).
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, List, Optional

LIBRARY_NAME = "libFlySnapshotCAPI.so"
_PACKAGE_DIR = Path(__file__).resolve().parent


from .errors import LibraryNotFoundError


class _FlyCompiler(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _FlyResult(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _FlySweepKernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("source", ctypes.c_char_p),
                ("sourceSize", ctypes.c_size_t)]


class _FlyVariant(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


_c_size_p = ctypes.POINTER(ctypes.c_size_t)

#: FlyStringCallback: (data, length, userData).
STRING_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

#: FlyVariantCallback: (variant, variantJSON, userData) -> cancel.
VARIANT_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, _FlyVariant, ctypes.c_char_p,
                                    ctypes.c_void_p)

# name -> (restype, argtypes), as declared in FlySnapshot.h.
_SIGNATURES = {
    "flyGetVersion": (ctypes.c_char_p, []),
    "flyGetLastError": (ctypes.c_char_p, []),
    "flyGetHintSpecsJSON": (ctypes.c_char_p, []),
    "flyCompilerCreate": (_FlyCompiler, [ctypes.c_char_p]),
    "flyCompilerDestroy": (None, [_FlyCompiler]),
    "flyCompilerCompile": (
        _FlyResult,
        [_FlyCompiler, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
         ctypes.c_char_p, ctypes.c_char_p],
    ),
    "flyCompilerSweep": (
        _FlyResult,
        [_FlyCompiler, ctypes.POINTER(_FlySweepKernel), ctypes.c_size_t,
         ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
         VARIANT_CALLBACK, ctypes.c_void_p],
    ),
    "flyVariantGetNumObjects": (ctypes.c_size_t, [_FlyVariant]),
    "flyVariantGetObject": (ctypes.c_void_p, [_FlyVariant, ctypes.c_size_t, _c_size_p]),
    "flyResultGetDiagnostics": (ctypes.c_char_p, [_FlyResult]),
    "flyResultPrefixFromCache": (ctypes.c_bool, [_FlyResult]),
    "flyResultGetNumVariants": (ctypes.c_size_t, [_FlyResult]),
    "flyResultGetVariantJSON": (ctypes.c_char_p, [_FlyResult, ctypes.c_size_t]),
    "flyResultVariantSucceeded": (ctypes.c_bool, [_FlyResult, ctypes.c_size_t]),
    "flyResultGetNumObjects": (ctypes.c_size_t, [_FlyResult, ctypes.c_size_t]),
    "flyResultGetObject": (
        ctypes.c_void_p, [_FlyResult, ctypes.c_size_t, ctypes.c_size_t, _c_size_p]),
    "flyResultGetObjectModule": (
        ctypes.c_char_p, [_FlyResult, ctypes.c_size_t, ctypes.c_size_t]),
    "flyResultDestroy": (None, [_FlyResult]),
    "flyResultWrite": (ctypes.c_bool, [_FlyResult, ctypes.c_char_p]),
    "flyGetPresetPipeline": (
        ctypes.c_bool, [ctypes.c_char_p, ctypes.c_char_p, STRING_CALLBACK, ctypes.c_void_p]),
    "flyCheckCompileArguments": (ctypes.c_bool, [ctypes.c_char_p, ctypes.c_char_p]),
    "flyCheckBinaryPass": (ctypes.c_bool, [ctypes.c_char_p, STRING_CALLBACK, ctypes.c_void_p]),
}


def candidate_paths() -> list[Path]:
    """Where the library is looked for, in order."""
    candidates = [_PACKAGE_DIR / "lib" / LIBRARY_NAME]
    locations = _PACKAGE_DIR / "_locations.json"
    if locations.is_file():
        recorded = json.loads(locations.read_text()).get("library")
        if recorded:
            path = Path(recorded)
            candidates.append(path if path.is_absolute() else _PACKAGE_DIR / path)
    return candidates


def library_path() -> Path:
    """The libFlySnapshotCAPI.so this package uses."""
    for path in candidate_paths():
        if path.is_file():
            return path.resolve()
    raise LibraryNotFoundError(
        "fly_snapshot cannot find %s; looked at: %s. Build it (ninja -C build "
        "FlySnapshotCAPI) before `pip install ./python`, or install with "
        "`cmake --install`." % (LIBRARY_NAME, ", ".join(map(str, candidate_paths()))))


_lib: Optional[ctypes.CDLL] = None
_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    """The loaded C API, declared once per process."""
    global _lib
    with _lock:
        if _lib is None:
            loaded = ctypes.CDLL(os.fspath(library_path()))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(loaded, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = loaded
        return _lib


def last_error() -> str:
    """flyGetLastError() of this thread: why its last fallible call failed
    (the C API's one error channel)."""
    return (lib().flyGetLastError() or b"").decode(errors="replace")


def get_string(call: Callable[[Any], bool]) -> Optional[str]:
    """Calls ``call`` with a FlyStringCallback and returns what it was handed,
    or None when the call failed (the reason: last_error())."""
    pieces: List[bytes] = []

    def collect(data: int, length: int, _user: Any) -> None:
        pieces.append(ctypes.string_at(data, length))

    if not call(STRING_CALLBACK(collect)):
        return None
    return b"".join(pieces).decode(errors="replace")


def check_binary_pass(binary_pass: str) -> Optional[str]:
    """flyCheckBinaryPass: ``binary_pass`` as the library prints it (one
    gpu-module-to-binary, every option spelled out), or None when the library
    refuses it (the reason: last_error())."""
    return get_string(lambda callback: lib().flyCheckBinaryPass(
        binary_pass.encode(), callback, None))
