#!/usr/bin/env python3
"""Which ROCDL codegen passes the register hints reach, and what they cost.

Read by rocdl_share.py (section 3 of bench/ROCDL-SHARE.md) from
fly-rocdl-stages --pass-report: per hint set, the code generation of the
optimised module with -debug-pass=Structure and -print-after-all (the
pipeline and what each pass left) and, in other processes, -time-passes.

  shared prefix : among hint sets that differ only in register hints
                  (waves_per_eu, maxnreg), the passes before the first at
                  which any of them leaves something else than the first
                  of them: what one shared run of those passes could save.
                  An upper bound: IR attribute groups are dropped before
                  comparing (they hold the hints), and the
                  MachineFunctionInfo is not printed.
  floor         : each pass run once per distinct (input, output) among the
                  hint sets: the least code-generation CPU that any exact
                  sharing of pass results could leave, even knowing in
                  advance which hint sets coincide.

  rocdl_passes.py FOLDER MODULE HINTS.json
      the bound of FOLDER/MODULE.<i>.{dump,times,s}, the reports of the hint
      sets of HINTS.json (a .times may hold several -time-passes reports), as
      JSON
"""

import collections
import hashlib
import json
import re
import statistics
import sys

DUMP_HEADER = re.compile(r"^(?:# )?\*\*\* IR Dump After (.+) \((\S+)\) \*\*\*:?$")
MIR_FUNCTION = re.compile(r"^# Machine code for function ([^:]+):")
IR_FUNCTION = re.compile(r"^define [^@]*@(\"[^\"]+\"|[\w.$-]+)\(")
TIMES_HEADER = "---User Time---"
MANAGERS = ("Pass Manager", "FunctionPass Manager", "ModulePass Manager",
            "CallGraph SCC Pass Manager", "MachineFunctionPass Manager")


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def split_dumps(text):
    """[(pass name, scope, normalised dump)] in print order. Scope: the
    function a function or machine pass printed, "" for a module pass."""
    dumps, name, body = [], None, []

    def close():
        if name is None:
            return
        scope, kept = "", []
        for line in body:
            if line.startswith(("attributes #", "; Function Attrs", "; ModuleID")):
                continue
            m = MIR_FUNCTION.match(line)
            if m and not scope:
                scope = m.group(1)
            kept.append(line)
        if not scope and not any(l.startswith("target datalayout") for l in body):
            for line in body:
                m = IR_FUNCTION.match(line)
                if m:
                    scope = m.group(1)
                    break
        dumps.append((name, scope, "\n".join(kept)))

    for line in text.split("\n"):
        m = DUMP_HEADER.match(line)
        if m:
            close()
            name, body = m.group(1), []
        elif name is not None:
            body.append(line)
    close()
    return dumps


def instance_keys(names):
    """The k-th occurrence of a name is instance k (time-passes' "#k")."""
    seen = collections.Counter()
    keys = []
    for n in names:
        seen[n] += 1
        keys.append((n, seen[n]))
    return keys


def segment_outputs(dumps):
    """{(pass, instance): digest of what every function got from it}. The
    instance counts per scope: each function runs the machine passes anew."""
    seen = collections.Counter()
    parts = collections.defaultdict(list)
    for name, scope, text in dumps:
        seen[(scope, name)] += 1
        parts[(name, seen[(scope, name)])].append(scope + "\n" + text)
    return {key: digest("\0".join(sorted(v))) for key, v in parts.items()}


def structure(text):
    """The main pipeline of a -debug-pass=Structure print: (pass, instance)
    in order. Its first "Pass Arguments" section only: later ones are the
    few analyses a pass asks for on the fly. Unindented lines are the
    immutable passes, set up once."""
    names, started = [], False
    for line in text.split("\n"):
        if line.startswith("Pass Arguments"):
            if started:
                break
            started = True
            continue
        if DUMP_HEADER.match(line):
            break
        text_ = line.strip()
        if started and line.startswith("  ") and text_ not in MANAGERS:
            names.append(text_)
    return instance_keys(names)


def pass_times(text):
    """{"name" or "name #k": CPU s} of a -time-passes report."""
    times, column = {}, None
    for line in text.split("\n"):
        if TIMES_HEADER in line:
            columns = [c.strip() for c in re.findall(r"-+([^-]+?)-+", line)]
            column = columns.index("User+System" if "User+System" in columns
                                   else "User Time")
            continue
        if column is None:
            continue
        m = re.match(r"^\s+((?:[\d.]+ \(\s*[\d.]+%\)\s+)+)(.+)$", line)
        if m:
            values = re.findall(r"([\d.]+) \(", m.group(1))
            times[m.group(2).strip()] = float(values[column])
        elif times and not line.strip():
            break
    times.pop("Total", None)
    return times


def time_key(key):
    name, k = key
    return name if k == 1 else "%s #%d" % (name, k)


def segments(dump_text, times_texts):
    """The codegen of one hint set as segments: each printed pass in
    pipeline order with the analyses run before it, its output digest and
    its median CPU (s) over the timing runs; last, whatever follows the last
    printed pass (the asm printer). Also the share of timed CPU mapped."""
    outputs = segment_outputs(split_dumps(dump_text))
    order = structure(dump_text)
    runs = [pass_times(t) for t in times_texts]
    times = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in runs[0]}
    result, pending, mapped = [], 0.0, 0.0
    for key in order:
        t = times.get(time_key(key), 0.0)
        pending += t
        mapped += t
        if key in outputs:
            result.append({"pass": time_key(key), "out": outputs[key], "s": pending})
            pending = 0.0
    result.append({"pass": "(after the last printed pass)", "out": None, "s": pending})
    total = sum(times.values())
    return result, (mapped / total if total else 0.0)


REGISTER_HINTS = ("waves_per_eu", "maxnreg")


def register_free(hints):
    """What of a hint set is not a register hint: variants that agree on it
    differ only in kernel attributes that code generation reads, the ones a
    shared prefix can be cut for (RocdlSharedOpt.h's notion)."""
    return json.dumps({k: v for k, v in hints.items() if k not in REGISTER_HINTS},
                      sort_keys=True)


def first_difference(segs, base):
    """Index of the first segment whose pass or output is not base's."""
    for i, s in enumerate(segs[:-1]):
        if i >= len(base) - 1 or s["pass"] != base[i]["pass"] or s["out"] != base[i]["out"]:
            return i
    return None


def bound(variants, hint_sets):
    """variants: {index: {"segments": [...], "isa": digest}} of hint_sets[index].

    Shared prefix: per group of hint sets that differ only in register
    hints, the segments before the first at which any member differs from
    the group's first; a group of one shares nothing. Floor: segment i of
    every variant, run once per distinct (position, pass, input, output).
    first_difference: per hint set, the first pass whose output is not the
    unhinted compile's."""
    names = list(variants)
    totals = {h: sum(s["s"] for s in variants[h]["segments"]) for h in names}
    groups = collections.defaultdict(list)
    for h in names:
        groups[register_free(hint_sets[h])].append(h)
    unhinted = variants[names[0]]["segments"]
    first_diff = {}
    for h in names[1:]:
        i = first_difference(variants[h]["segments"], unhinted)
        first_diff[str(h)] = None if i is None else variants[h]["segments"][i]["pass"]
    prefix, cuts = {}, collections.Counter()
    for members in groups.values():
        base = variants[members[0]]["segments"]
        cut = len(base) - 1 if len(members) > 1 else 0
        for h in members[1:]:
            i = first_difference(variants[h]["segments"], base)
            if i is not None:
                cut = min(cut, i)
        if len(members) > 1:
            cuts[base[cut]["pass"]] += len(members)
        for h in members:
            prefix[h] = sum(s["s"] for s in variants[h]["segments"][:cut]) / totals[h]
    floor, classes = 0.0, {}
    for h in names:
        segs = variants[h]["segments"]
        for i, s in enumerate(segs):
            last = i == len(segs) - 1
            key = ("tail" if last else i, s["pass"], segs[i - 1]["out"] if i else "",
                   variants[h]["isa"] if last else s["out"])
            classes.setdefault(key, []).append(s["s"])
    floor = sum(statistics.mean(v) for v in classes.values())
    return {
        "codegen_ms_mean": statistics.mean(totals.values()) * 1e3,
        "cuts": dict(cuts),
        "first_difference": first_diff,
        "prefix_share_mean": statistics.mean(prefix.values()),
        "floor_share": floor / sum(totals.values()),
        "distinct_isa": len({v["isa"] for v in variants.values()}),
        "n": len(names),
    }


def load(stem):
    """One hint set's report as written by fly-rocdl-stages --pass-report."""
    with open(stem + ".times") as f:
        reports = f.read().split("Pass execution timing report")[1:]
    with open(stem + ".dump") as f:
        segs, mapped = segments(f.read(), reports)
    with open(stem + ".s") as f:
        isa = digest(f.read())
    return {"segments": segs, "isa": isa, "mapped": mapped}


if __name__ == "__main__":
    folder, module = sys.argv[1], sys.argv[2]
    with open(sys.argv[3]) as f:
        hint_sets = json.load(f)
    variants = {i: load("%s/%s.%d" % (folder, module, i)) for i in range(len(hint_sets))}
    result = bound(variants, hint_sets)
    result["mapped_min"] = min(v["mapped"] for v in variants.values())
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
