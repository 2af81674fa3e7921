#!/usr/bin/env python3
"""Says whose bug a libFuzzer/sanitizer report is.

Prints one word:
  fly           the first stack (the one right after the first "ERROR:"
                line), read innermost first and skipping frames of the
                sanitizer/libFuzzer runtimes and libc (malloc, abort, signal
                delivery), reaches fly's code (fly's sources, the fuzz
                targets, or LLVM header code inlined into them, whose frames
                point at /usr/lib/llvm-22/include) before any library;
  upstream      it reaches Debian's libLLVM/libMLIR (/usr/lib/llvm-22/lib)
                first;
  rss-oom       libFuzzer's RSS limit was hit: the report names no culprit
                (only a heap profile), so it cannot be attributed;
  unreproduced  the input ran cleanly when re-run alone (the failure needed
                state left by earlier inputs, e.g. memory use).
A report with an error but no stack counts as "fly".
Usage: classify_crash.py REPORT_FILE
"""
import re
import sys

RUNTIME = re.compile(
    r"__sanitizer|__asan|__ubsan|__lsan|__interceptor|fuzzer::|"
    r"\bin (malloc|calloc|realloc|free|operator new|operator delete|abort|"
    r"raise|gsignal|__pthread_kill\w*|pthread_kill|__libc_\w+|_start|main)\b|"
    r"libc\.so|libc-start|/csu/|/nptl/|/signal/|/stdlib/|<unknown module>|"
    r"\(linux-vdso|libFuzzer|compiler-rt|libclang_rt")
UPSTREAM = re.compile(r"/usr/lib/llvm-\d+/lib/|libMLIR\.so|libLLVM\.so|/llvm-toolchain-")
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ ")


def classify(text):
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if "ERROR:" in l), None)
    if start is None:
        return "unreproduced"
    if "libFuzzer: out-of-memory (used:" in lines[start]:
        return "rss-oom"
    seen_frame = False
    for line in lines[start + 1:]:
        if not FRAME.match(line):
            if seen_frame and not line.strip():
                break
            continue
        seen_frame = True
        if RUNTIME.search(line):
            continue
        return "upstream" if UPSTREAM.search(line) else "fly"
    return "fly"


if __name__ == "__main__":
    with open(sys.argv[1], errors="replace") as f:
        print(classify(f.read()))
