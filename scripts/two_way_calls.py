#!/usr/bin/env python3
"""Fails when two library files call each other.

Usage: scripts/two_way_calls.py BUILD_DIR

Reads the symbols of every library object file under BUILD_DIR (nm): file A
uses file B when A needs a symbol B defines. A pair that uses each other in
both directions is a cycle: what both need belongs in a leaf file below them
(issue 36; docs/ARCHITECTURE.md). Prints each pair and exits 1 if there is
any, 0 otherwise. Give it a fresh build (as .ci/run does): an object left
from a deleted source still counts.
"""
import collections
import os
import subprocess
import sys

# Folders whose objects are not the library: the command, tests, benchmarks.
NOT_LIBRARY = ('tests', 'bench', 'fuzz', 'tools', 'examples', 'python',
               'CMakeTmp')


def symbols(obj):
    """The global symbols obj defines, and those it needs from elsewhere."""
    out = subprocess.run(['nm', obj], capture_output=True, text=True,
                         check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TDBRCVW':
            defined.add(f[2])
        elif len(f) == 2 and f[0] == 'U':
            needed.add(f[1])
    return defined, needed


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    objs = {}  # "codecs/decoder" -> its object file
    for d, _, files in os.walk(sys.argv[1]):
        rel = os.path.relpath(d, sys.argv[1]).split(os.sep)
        if any(part in rel for part in NOT_LIBRARY):
            continue
        for f in files:
            if f.endswith(('.c.o', '.cu.o')) and '.dir' + os.sep in d + os.sep:
                path = os.path.join(d, f)
                objs[path.split('.dir' + os.sep)[-1].rsplit('.', 2)[0]] = path
    if not objs:
        sys.exit('two_way_calls: no object files under ' + sys.argv[1])
    owner, needs = {}, {}
    for name, path in objs.items():
        defined, needs[name] = symbols(path)
        for s in defined:
            owner[s] = name
    uses = collections.defaultdict(set)
    for name, needed in needs.items():
        uses[name] = {owner[s] for s in needed if owner.get(s, name) != name}
    pairs = sorted({tuple(sorted((a, b)))
                    for a in uses for b in uses[a] if a in uses[b]})
    for a, b in pairs:
        print(a, '<->', b)
    print(len(pairs), 'pairs of library files that call each other')
    return 1 if pairs else 0


if __name__ == '__main__':
    sys.exit(main())
