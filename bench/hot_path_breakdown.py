#!/usr/bin/env python3
"""Where the sustained collective's instructions go, by what they do.

Reads the trail test_hot_path_cost writes with KATRACE_HOT_PATH_TRAIL=FILE (each instruction of
the median collective: its callback and its offset in the plugin's .so), names each instruction's
innermost function with addr2line (inlined code counts as the function it was written in) and
its mnemonic with objdump, and prints one row per callback:

  checks     handle and context validation: decoding, range and generation checks, lookups
  slot life  pool slots taken and given back, holds, completion, links to the parent
  records    the capture buffer: room, header and fields of the record, record ids
  strings    string ids from the thread's memo
  clock      the host clock reads
  calls      pushes, pops, calls and returns
  own        the callbacks' own lines: dispatch, masks, the window, the slot's fields
  outside    instructions outside the plugin (libc, the vDSO)

Usage: bench/hot_path_breakdown.py TRAIL PLUGIN.so [--functions]
  --functions  also lists, per callback, the functions with at least 3 instructions
"""
import collections
import subprocess
import sys

CATEGORIES = [
    ("checks", ["DecodeHandle", "ResolveFields", "Resolve(", "LookupContext", "DecodeContext", "ContextAt",
                "NamesNoSlot", "IsLiveUnstopped", "EncodeHandle", "SlotlessHandle", "KindFromType",
                "EventPool::slot", "unique_ptr"]),
    ("slot life", ["ThreadBiasedFreeList", "EventPool::Acquire", "EventPool::Release", "SlotState", "Complete",
                   "ReleaseSlot", "AttachParent", "ParentTaskMask", "PackMask", "UnpackMask", "GetPool"]),
    ("records", ["ThreadBuffer", "WriteRecordHeader", "ReserveRecord", "AppendRecordInPlace", "AppendStart",
                 "RecordStart", "BufferForThisThread", "NextRecordId", "StartFlags"]),
    ("strings", ["StringIdCache", "InternString"]),
    ("clock", ["NowTicks", "__rdtsc"]),
]
COLUMNS = [name for name, _ in CATEGORIES] + ["calls", "own", "outside"]
CALL_MNEMONICS = {"push", "pop", "ret", "call", "leave"}


def read_trail(path):
    rows = []
    try:
        f = open(path)
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    with f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) < 3 or not parts[0].isdigit():
                sys.exit(f"{path}:{number}: not a trail line (callback number, name, offset): {line.strip()!r}")
            offset = None if parts[-1] == "-" else int(parts[-1], 16)
            rows.append((int(parts[0]), " ".join(parts[1:-1]), offset))
    if not rows:
        sys.exit(f"{path}: no instructions (run test_hot_path_cost with KATRACE_HOT_PATH_TRAIL={path})")
    return rows


def run(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"{args[0]} failed: {e}")


def function_names(so, offsets):
    out = run(["addr2line", "-f", "-C", "-e", so] + [hex(o) for o in offsets]).split("\n")
    return {o: out[2 * i] for i, o in enumerate(offsets)}


def mnemonics(so, offsets):
    wanted = set(offsets)
    found = {}
    for line in run(["objdump", "-d", "--no-show-raw-insn", so]).split("\n"):
        address, _, rest = line.partition(":\t")
        address = address.strip()
        if not rest or not all(c in "0123456789abcdef" for c in address):
            continue
        offset = int(address, 16)
        if offset in wanted:
            found[offset] = rest.split()[0] if rest.split() else ""
    return found


def short_name(function):
    """A function's name without its namespaces, return type and parameters."""
    name = function.replace("(anonymous namespace)::", "").replace("katrace::", "").replace("core::", "")
    depth = 0
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if c == "(" and depth == 0 and i > 0:
            name = name[:i]
            break
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += (name[i] == ">") - (name[i] == "<")
        if name[i] == " " and depth == 0:
            return name[i + 1:]
    return name


def category(function, mnemonic):
    if mnemonic in CALL_MNEMONICS:
        return "calls"
    for name, keys in CATEGORIES:
        if any(k in function for k in keys):
            return name
    return "own"


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--functions"):
        sys.exit(__doc__)
    rows = read_trail(sys.argv[1])
    so = sys.argv[2]
    offsets = sorted({o for _, _, o in rows if o is not None})
    functions = function_names(so, offsets)
    ops = mnemonics(so, offsets)
    names = {}
    table = collections.defaultdict(collections.Counter)
    per_function = collections.defaultdict(collections.Counter)
    for callback, name, offset in rows:
        names[callback] = name
        if offset is None:
            table[callback]["outside"] += 1
            continue
        function = functions.get(offset, "??")
        table[callback][category(function, ops.get(offset, ""))] += 1
        per_function[callback][short_name(function)] += 1
    print("| callback | " + " | ".join(COLUMNS) + " | all |")
    print("| --- |" + " ---: |" * (len(COLUMNS) + 1))
    total = collections.Counter()
    for callback in sorted(table):
        counts = table[callback]
        total.update(counts)
        print(f"| {names[callback]} | " + " | ".join(str(counts[c]) for c in COLUMNS) + f" | {sum(counts.values())} |")
    print(f"| all {len(table)} | " + " | ".join(str(total[c]) for c in COLUMNS) + f" | {sum(total.values())} |")
    if len(sys.argv) == 4:
        for callback in sorted(per_function):
            listed = "; ".join(f"{f} {n}" for f, n in per_function[callback].most_common() if n >= 3)
            print(f"\n{names[callback]}: {listed}")


if __name__ == "__main__":
    main()
