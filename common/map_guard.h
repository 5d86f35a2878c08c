/* A guarded copy out of a file mapping: the bytes of a mapped file that
 * shrank (truncated, replaced in place) or whose page cannot be read (a
 * disk error) fault with SIGBUS; inside sl_guard_copy that fault becomes a
 * return value instead of the death of the process.
 *
 * How: one process-wide SIGBUS handler (sigaction, SA_SIGINFO|SA_NODEFER),
 * installed when an mmap reader opens. A fault on a thread that is inside
 * sl_guard_copy, at an address inside the range being copied, jumps back
 * out of the copy (siglongjmp); every other SIGBUS goes to the handler that
 * was installed before (or, when that was the default, re-faults with the
 * default action: the process dies as it would have without sluice).
 *
 * Only a fault the kernel raised (si_code > 0) is taken for a copy's; a
 * SIGBUS sent by kill() goes on down the chain. When an mmap reader opens
 * after the application installed a handler on top of sluice's, sluice's
 * goes back on top and chains to it; if that handler chains back to
 * sluice's (Python's faulthandler does), the chain then ends at the
 * handler found before sluice's first install, so it cannot loop.
 *
 * Limits (also in sluice.h's Caveats): a SIGBUS handler installed by the
 * application after sluice's replaces it; sl_guard_ready then says so, and
 * the reader falls back to pread (until it is reopened, at most 16 times)
 * rather than risk the process. A thread
 * that blocks SIGBUS cannot be rescued (the kernel kills the process on a
 * blocked synchronous fault). The handler survives fork(); so does the
 * mapping.
 *
 * Thread safety: any number of threads may copy at once (the state of a
 * copy is thread-local). */
#ifndef SLUICE_COMMON_MAP_GUARD_H
#define SLUICE_COMMON_MAP_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* Installs the handler unless it is installed now (each mmap reader's open
 * calls it: one that something replaced since goes back on top, chaining
 * to the replacement). Errors: SL_EIO (sigaction). */
sl_status sl_guard_install(sl_err *err);
/* Whether sluice's handler is the one installed now (false when the
 * application replaced it after sl_guard_install). One syscall. */
bool sl_guard_ready(void);
/* Copies n bytes from src (inside a file mapping) to dst. Returns true, or
 * false when a page of src faulted; *fault_off is then its offset in src. */
bool sl_guard_copy(void *dst, const void *src, size_t n, size_t *fault_off);
/* Runs fn(ctx) with the faults on [lo, lo + n) (inside a file mapping)
 * caught: what a walk over a whole mapped file at open uses, where a copy
 * per access would cost too much. Returns true when fn returned; false when
 * a page of the range faulted (*fault_off is then its offset from lo) and
 * fn was left at that access. fn must therefore keep what it allocates
 * reachable from ctx (the caller frees it), hold no lock while it reads
 * the range, and not call sl_guard_copy or sl_guard_call itself. */
bool sl_guard_call(void (*fn)(void *ctx), void *ctx, const void *lo, size_t n,
                   size_t *fault_off);
/* As sl_guard_call with a fault at any address caught: for a walk through
 * a mapping the caller cannot name (liblmdb's own map of the file: it does
 * not export its address). On this thread, while fn runs, only the file
 * mappings fn reads can fault with SIGBUS. fn is bound as sl_guard_call's;
 * a library it calls must hold no lock across its reads either. */
bool sl_guard_call_any(void (*fn)(void *ctx), void *ctx);

#endif
