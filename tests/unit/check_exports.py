#!/usr/bin/env python3
"""The exported ABI is the header's SL_API list, nothing more or less.

Usage: check_exports.py include/sluice.h path/to/libsluice.so

Every function include/sluice.h declares with SL_API (the experimental
section too) must be a defined dynamic symbol of libsluice.so, and every
defined dynamic symbol must be one of them: an internal function that
lost its hidden visibility, or a public one that lost its definition,
fails here (as liburing's liburing.map is kept honest). Names beginning
with "__" are the toolchain's (sanitizer instrumentation) and are not
compared. Exits 1 naming each difference, 0 otherwise.
"""
import re
import subprocess
import sys


def declared(header):
    text = re.sub(r'/\*.*?\*/', '', open(header).read(), flags=re.S)
    text = re.sub(r'^\s*#.*$', '', text, flags=re.M)  # SL_API's own definition
    return set(re.findall(r'\bSL_API\b[^;(]*?\b([A-Za-z_]\w*)\s*\(', text))


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib],
                         capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and not f[2].startswith('__'):
            names.add(f[2].split('@')[0])
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    api, abi = declared(sys.argv[1]), exported(sys.argv[2])
    if not api:
        sys.exit('check_exports: no SL_API function found in ' + sys.argv[1])
    bad = 0
    for name in sorted(api - abi):
        print(f'declared SL_API in {sys.argv[1]} but not exported: {name}')
        bad += 1
    for name in sorted(abi - api):
        print(f'exported by {sys.argv[2]} but not declared SL_API: {name}')
        bad += 1
    print(f'{len(api)} SL_API functions, {len(abi)} exported symbols, '
          f'{bad} differences')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
