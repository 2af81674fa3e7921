#!/usr/bin/env python3
"""Runs the documentation: every ```sh and ```cpp block of README.md and
docs/*.md, so the docs cannot drift from the code.

- ```sh blocks run verbatim with bash (set -eo pipefail), one markdown file
  per fresh work directory in which `build`, `examples`, `docs`, `include`
  and `test` link to the real build and source trees. A block must exit 0.
- ```cpp blocks are complete programs: they are compiled against the
  installed package (cmake --install, then find_package(FlySnapshot)) and
  run.
- A ```text block right after a run block, marked `output`, must equal what
  that block printed on stdout, decimals (timings) aside.

An HTML comment on the line(s) before a block says how to treat it:
  <!-- docs-test: skip: <why> -->         not run (the reason is required)
  <!-- docs-test: files a=b c=d -->       placeholders: copy source file b
                                          to a in the work dir first
  <!-- docs-test: requires ptxas -->      skipped where ptxas is missing
                                          (also: rocdl-toolkit)
  <!-- docs-test: exit N -->              the block must exit with N
  <!-- docs-test: args a b -->            command-line arguments (cpp)
  <!-- docs-test: output -->              (before a text block) compare

usage: run_docs.py --src SRC --build BUILD --work DIR [--cmake CMAKE]
       [--cxx CXX] [--features a,b] [files...]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")


def parse_blocks(path):
    """Yields (line, lang, text, directives) for each fenced block."""
    lines = open(path).read().split("\n")
    directives = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.search(line)
        if m:
            directives.append(m.group(1))
            i += 1
            continue
        fence = FENCE.match(line)
        if fence:
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield start, fence.group(1), "\n".join(lines[start:j]) + "\n", directives
            directives = []
            i = j + 1
            continue
        if line.strip():
            directives = []
        i += 1


def normalise(text):
    """Timings vary from run to run: decimals become '#'; spacing too."""
    out = []
    for line in text.strip("\n").split("\n"):
        line = re.sub(r"\d+\.\d+", "#", line)
        out.append(re.sub(r"\s+", " ", line.strip()))
    return out


class Runner:
    def __init__(self, args):
        self.args = args
        self.failures = 0
        self.ran = 0
        self.skipped = 0
        self.prefix = None

    def fail(self, where, message):
        print(f"FAIL {where}: {message}")
        self.failures += 1

    def setup_workdir(self, md):
        work = os.path.join(self.args.work, os.path.basename(md).replace(".", "_"))
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for name in ["examples", "docs", "include", "test", "scripts"]:
            os.symlink(os.path.join(self.args.src, name), os.path.join(work, name))
        os.symlink(self.args.build, os.path.join(work, "build"))
        return work

    def env(self, work):
        env = dict(os.environ)
        # The docs' commands must not touch a user's cache or dumps.
        env["FLY_CACHE_DIR"] = os.path.join(work, ".fly-cache")
        for var in ["FLY_ENABLE_CACHE", "FLY_DUMP_IR", "FLY_DUMP_DIR",
                    "FLY_ALWAYS_COMPILE", "FLY_DUMP_KERNEL"]:
            env.pop(var, None)
        return env

    def install_prefix(self):
        if self.prefix is None:
            self.prefix = os.path.join(self.args.work, "prefix")
            shutil.rmtree(self.prefix, ignore_errors=True)
            proc = subprocess.run([self.args.cmake, "--install", self.args.build,
                                   "--prefix", self.prefix], text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if proc.returncode:
                self.fail("cmake --install", proc.stdout)
                self.prefix = ""
        return self.prefix

    def run_sh(self, where, work, text, expected_exit):
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", text], cwd=work,
                              env=self.env(work), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=600)
        self.ran += 1
        if proc.returncode != expected_exit:
            self.fail(where, f"exit {proc.returncode}, expected {expected_exit}\n"
                      f"--- block\n{text}--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")
        return proc.stdout

    def run_cpp(self, where, work, text, args):
        prefix = self.install_prefix()
        if not prefix:
            return ""
        project = os.path.join(work, f"cpp_{where.split(':')[-1]}")
        os.makedirs(project, exist_ok=True)
        with open(os.path.join(project, "snippet.cpp"), "w") as f:
            f.write(text)
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\n"
                    "project(DocsSnippet LANGUAGES CXX)\n"
                    "find_package(FlySnapshot REQUIRED CONFIG)\n"
                    "add_executable(snippet snippet.cpp)\n"
                    "target_link_libraries(snippet PRIVATE FlySnapshot::FlySnapshot)\n")
        build = os.path.join(project, "build")
        steps = [[self.args.cmake, "-S", project, "-B", build, "-G", "Ninja",
                  f"-DCMAKE_PREFIX_PATH={prefix}",
                  f"-DCMAKE_CXX_COMPILER={self.args.cxx}"],
                 [self.args.cmake, "--build", build]]
        for step in steps:
            proc = subprocess.run(step, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if proc.returncode:
                self.fail(where, f"cannot build the C++ block:\n{proc.stdout}")
                return ""
        proc = subprocess.run([os.path.join(build, "snippet")] + args, cwd=work,
                              env=self.env(work), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=600)
        self.ran += 1
        if proc.returncode:
            self.fail(where, f"the C++ block's program exited {proc.returncode}\n"
                      f"--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")
        return proc.stdout

    def run_file(self, md):
        rel = os.path.relpath(md, self.args.src)
        work = self.setup_workdir(md)
        last_output = None
        for line, lang, text, directives in parse_blocks(md):
            where = f"{rel}:{line}"
            opts = {}
            for d in directives:
                key, _, value = d.partition(" ")
                opts[key.rstrip(":")] = value.strip()
            if "output" in opts:
                if last_output is None:
                    self.fail(where, "an output block with no run block before it")
                    continue
                want, got = normalise(text), normalise(last_output)
                if want != got:
                    self.fail(where, "the documented output differs from what "
                              "the block above printed\n--- documented\n" +
                              "\n".join(want) + "\n--- printed\n" + "\n".join(got))
                else:
                    print(f"ok   {where}: output matches")
                last_output = None
                continue
            if lang not in ("sh", "cpp"):
                continue
            if "skip" in opts:
                if not opts["skip"]:
                    self.fail(where, "skip needs a reason")
                print(f"skip {where}: {opts['skip']}")
                self.skipped += 1
                continue
            missing = [r for r in opts.get("requires", "").split() if r not in self.args.features]
            if missing:
                print(f"skip {where}: needs {', '.join(missing)}")
                self.skipped += 1
                last_output = None
                continue
            for pair in opts.get("files", "").split():
                placeholder, _, real = pair.partition("=")
                dest = os.path.join(work, placeholder)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copyfile(os.path.join(self.args.src, real), dest)
            failures = self.failures
            if lang == "sh":
                last_output = self.run_sh(where, work, text, int(opts.get("exit", "0")))
            else:
                last_output = self.run_cpp(where, work, text, opts.get("args", "").split())
            if self.failures == failures:
                print(f"ran  {where}: {lang}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--features", default="")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    args.src = os.path.abspath(args.src)
    args.build = os.path.abspath(args.build)
    args.work = os.path.abspath(args.work)
    args.features = set(filter(None, args.features.split(",")))
    files = args.files or [os.path.join(args.src, "README.md")] + sorted(
        glob.glob(os.path.join(args.src, "docs", "*.md")))
    os.makedirs(args.work, exist_ok=True)
    runner = Runner(args)
    for md in files:
        runner.run_file(os.path.abspath(md))
    print(f"docs: {runner.ran} blocks run, {runner.skipped} skipped, "
          f"{runner.failures} failed")
    if runner.ran == 0:
        print("docs: nothing ran")
        return 1
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
