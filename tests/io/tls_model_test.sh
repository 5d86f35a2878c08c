#!/bin/sh
# The SIGBUS handler's thread-locals use the initial-exec TLS model
# (io/io_guard.c, issue 25): libsluice is dlopen'ed by Python, and a
# general- or local-dynamic access's first touch on a thread may allocate
# inside the handler. Every TLS relocation in the library (a .so or a .a)
# must therefore be an initial-exec one (TPOFF, GOTTPOFF), and there must
# be some: the guard's.
#   tls_model_test.sh LIBRARY
set -u
lib=$1
# The code's relocations only: debug info names thread-locals by DTPOFF.
relocs=$(readelf -rW "$lib") || { echo "tls_model_test: readelf $lib failed"; exit 1; }
relocs=$(printf '%s\n' "$relocs" |
  awk "/^Relocation section/ { skip = index(\$0, \".debug\") > 0 } !skip")
dynamic=$(printf '%s\n' "$relocs" | grep -E 'R_X86_64_(TLSGD|TLSLD|DTPMOD64|DTPOFF32|DTPOFF64)|R_AARCH64_TLS(GD|LD|DESC)|R_X86_64_GOTPC32_TLSDESC')
ie=$(printf '%s\n' "$relocs" | grep -cE 'TPOFF|TPREL')
if [ -n "$dynamic" ]; then
  echo "tls_model_test: FAILED: $lib has dynamic-model TLS accesses:"
  printf '%s\n' "$dynamic" | head -20
  exit 1
fi
if [ "$ie" -eq 0 ]; then
  echo "tls_model_test: FAILED: no initial-exec TLS relocation in $lib (the guard's thread-locals?)"
  exit 1
fi
echo "tls_model_test: $lib: $ie initial-exec TLS relocations, no dynamic-model ones"
