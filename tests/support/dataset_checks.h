/* Checks the format tests make on datasets and loaders through the public
 * API (include/sluice.h): opening with config pairs, pixels against a
 * reference, damaged files refused and then skipped in verify mode, the
 * loader on each io backend, and `sluice info` / `verify` on a file. Each
 * failure is a cmocka failure whose message names what was checked (the
 * `what` argument: usually the file) and where.
 *
 * Thread safety: call from the test's main thread (cmocka's fail_msg). */
#ifndef SLUICE_TESTS_SUPPORT_DATASET_CHECKS_H
#define SLUICE_TESTS_SUPPORT_DATASET_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"
#include "tests/support/bad_seen.h"

/* The loader.io backends every format is read through, in order. */
enum { SL_TEST_IO_COUNT = 3 };
extern const char *const sl_test_io_backends[SL_TEST_IO_COUNT];

/* Fails unless each of got's n bytes is within tolerance of want's,
 * naming what, the sample and the first byte that is not. */
void sl_test_expect_pixels(const uint8_t *got, const uint8_t *want, size_t n,
                           int tolerance, const char *what, uint64_t sample);

/* Decodes sample i of ds and fails unless it matches rgb, its side x side
 * RGB reference (a gray sample: the reference's R), within tolerance;
 * names what and the sample. */
void sl_test_expect_decode(sl_dataset *ds, uint64_t i, const uint8_t *rgb,
                           int side, int tolerance, const char *what);

/* A config with each key, value pair of kv (NULL-terminated, may be NULL)
 * set; a refused pair fails with the config's message. */
sl_config *sl_test_config_kv(const char *const *kv);

/* Sets cfg for the loader's batches of one sample each at its native size
 * (up to max_side; crop none, no flip, u8 NHWC on the host), with workers,
 * order and io as given; fails naming a refused key. */
void sl_test_set_native_batches(sl_config *cfg, const char *workers,
                                const char *order, const char *io,
                                const char *max_side);

/* sl_dataset_open on dataset.path = dir/file (file alone where dir is
 * NULL) and the pairs of kv. Returns its status; *ds as sl_dataset_open
 * leaves it. */
sl_status sl_test_try_open_kv(sl_dataset **ds, const char *dir,
                              const char *file, const char *const *kv);

/* As sl_test_try_open_kv, failing with file and the dataset's message
 * unless it opens. */
sl_dataset *sl_test_open_kv(const char *dir, const char *file,
                            const char *const *kv);

/* A loader on cfg, or NULL where io is "uring" and this kernel refuses it
 * (said with print_message, as io_uring may be off here); any other
 * refusal fails naming what, io and the loader's message. */
sl_loader *sl_test_loader_open_or_skip(sl_config *cfg, const char *io,
                                       const char *what);

/* Fails unless opening path is refused with status and the message holds
 * each phrase of want (NULL-terminated), naming what and the phrase. */
void sl_test_expect_open_refused(const char *path, sl_status status,
                                 const char *what, const char *const *want);

/* Opens path in verify mode, filling *seen; fails naming what unless it
 * opens. */
sl_dataset *sl_test_open_verify(const char *path, const char *what,
                                sl_test_bad_seen *seen);

/* Fails unless ds holds count samples, bad among them with no codec (the
 * sample verify mode skipped) and good with one. */
void sl_test_expect_skipped(sl_dataset *ds, uint64_t count, uint64_t bad,
                            uint64_t good);

/* The whole check of a file with one damaged sample: the open is
 * SL_EFORMAT with each phrase of want; verify mode reports sample bad
 * alone, its reason holding want[0], and opens count samples with good
 * readable. */
void sl_test_expect_one_bad_sample(const char *path, const char *what,
                                   const char *const *want, uint64_t bad,
                                   uint64_t good, uint64_t count);

/* The references make_shards.py and make_wds.py write beside their
 * fixtures (NAME.ref: per sample an int32 label, an int32 lossy flag and
 * the 16x16 RGB pixels). */
enum { SL_TEST_REF_SIDE = 16, SL_TEST_REF_MAX = 64 };
typedef struct sl_test_ref {
  int32_t label, lossy;
  uint8_t rgb[SL_TEST_REF_SIDE * SL_TEST_REF_SIDE * 3];
} sl_test_ref;

/* dir/NAME.ref's samples (at most SL_TEST_REF_MAX) in a calloc'd array;
 * *n is how many. */
sl_test_ref *sl_test_load_refs(const char *dir, const char *name, size_t *n);

/* Fails unless got (a 16x16 RGB sample) is r's pixels: exact for lossless
 * images, within what two IDCTs differ by (6) for lossy ones; names what,
 * the sample and the largest difference. */
void sl_test_expect_ref_pixels(const uint8_t *got, const sl_test_ref *r,
                               const char *what, uint64_t sample);

/* Fails unless ds is of format format and holds r's n samples in order:
 * labels, 16x16 sides and decoded pixels as sl_test_expect_ref_pixels;
 * names what and the sample. */
void sl_test_expect_refs(sl_dataset *ds, const char *format,
                         const sl_test_ref *r, size_t n, const char *what);

/* `sluice info DIR/FILE` exits 0 printing want, and `sluice verify
 * --decode DIR/FILE` exits 0 (the built command, tests/tools/cli_run.h);
 * fails naming the file with the command's output. */
void sl_test_expect_cli_info(const char *dir, const char *file,
                             const char *want);

#endif
