"""Bounded readers of files and JSON that fly_snapshot did not write itself
(an out-dir's manifest and objects), with the checks fly-run applies: only
plain file names inside the directory, only regular files (a FIFO is
refused without blocking, /dev/zero is not read), a size bound, and JSON
nesting bounded before ``json`` recurses into it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from .errors import FlyError

#: The deepest nesting of JSON arrays and objects accepted (fly's own
#: documents nest fewer than 10 levels), as lib/Support/BoundedJSON.
MAX_JSON_DEPTH = 256


def is_plain_file_name(name: object) -> bool:
    """One file name: no separator, not ``.`` or ``..``, no NUL."""
    return (isinstance(name, str) and name not in ("", ".", "..")
            and not any(c in name for c in "/\\\0"))


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not through a final
    symbolic link) of at most ``max_bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise FlyError("cannot read '%s': %s" % (path, e.strerror or e)) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FlyError("cannot read '%s': not a regular file" % path)
        if st.st_size > max_bytes:
            raise FlyError("cannot read '%s': %d bytes, more than the %d accepted"
                           % (path, st.st_size, max_bytes))
        chunks = []
        left = st.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _nesting_error(text: str, max_depth: int) -> str:
    """Where ``text`` nests deeper than ``max_depth`` ("line:column"), or ""."""
    depth = 0
    line, line_start = 1, 0
    in_string = escaped = False
    for i, c in enumerate(text):
        if c == "\n":
            line, line_start = line + 1, i + 1
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > max_depth:
                return "%d:%d" % (line, i - line_start + 1)
        elif c in "]}" and depth:
            depth -= 1
    return ""


def loads_bounded(text: str, source: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` of ``text`` after checking its nesting; errors are
    FlyError naming ``source``."""
    where = _nesting_error(text, max_depth)
    if where:
        raise FlyError("%s: %s: JSON nested deeper than the %d levels accepted"
                       % (source, where, max_depth))
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise FlyError("%s: %s" % (source, e)) from e
