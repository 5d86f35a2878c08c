/* Sampler and schedule: orders are permutations, pure functions of (seed,
 * epoch, rank, world); sharding is disjoint and covering for every order;
 * drop_last/padding give every rank the same whole batches; quasi_random
 * stays within its window; the schedule's forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loader/dmix_spec.h"
#include "loader/sampler.h"
#include "loader/schedule.h"
#include "loader/settings.h"

static sl_sampler *mk(uint64_t n, uint64_t bs, uint64_t rank, uint64_t world,
                      sl_order order, uint64_t seed, bool drop_last) {
  sl_sampler_config c = {.count = n,
                         .batch_size = bs,
                         .rank = rank,
                         .world_size = world,
                         .order = order,
                         .seed = seed,
                         .drop_last = drop_last,
                         .quasi_block = 8,
                         .quasi_window = 4};
  sl_sampler *s = NULL;
  sl_err err;
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_OK);
  return s;
}

/* World 1, padding off and N a multiple of the batch: each epoch is a
 * permutation of 0..N-1 for every order. */
static void test_orders_are_permutations(void **state) {
  const uint64_t n = 1000;
  for (int o = 0; o < 3; o++) {
    sl_sampler *s = mk(n, 10, 0, 1, (sl_order)o, 7, true);
    assert_int_equal(sl_sampler_batches(s), 100);
    for (uint64_t e = 0; e < 3; e++) {
      sl_sampler_set_epoch(s, e);
      uint8_t *seen = calloc(n, 1);
      uint64_t in_place = 0;
      for (uint64_t p = 0; p < n; p++) {
        uint64_t i = sl_sampler_at(s, p);
        assert_true(i < n);
        assert_int_equal(seen[i], 0);
        seen[i] = 1;
        in_place += i == p;
      }
      if (o == SL_ORDER_SEQUENTIAL)
        assert_int_equal(in_place, n);
      else
        assert_true(in_place < n / 10); /* actually shuffled */
      free(seen);
    }
    sl_sampler_destroy(s);
  }
}

/* Same (seed, epoch) → same order; another epoch or seed → another. */
static void test_order_pure_function(void **state) {
  for (int o = 1; o < 3; o++) {
    sl_sampler *a = mk(500, 5, 0, 1, (sl_order)o, 3, true);
    sl_sampler *b = mk(500, 5, 0, 1, (sl_order)o, 3, true);
    sl_sampler *c = mk(500, 5, 0, 1, (sl_order)o, 4, true);
    sl_sampler_set_epoch(a, 2);
    sl_sampler_set_epoch(b, 5);
    sl_sampler_set_epoch(b, 2); /* history does not matter */
    sl_sampler_set_epoch(c, 2);
    int diff_seed = 0;
    for (uint64_t p = 0; p < 500; p++) {
      assert_int_equal(sl_sampler_at(a, p), sl_sampler_at(b, p));
      diff_seed += sl_sampler_at(a, p) != sl_sampler_at(c, p);
    }
    assert_true(diff_seed > 100);
    sl_sampler_set_epoch(b, 3);
    int diff_epoch = 0;
    for (uint64_t p = 0; p < 500; p++)
      diff_epoch += sl_sampler_at(a, p) != sl_sampler_at(b, p);
    assert_true(diff_epoch > 100);
    sl_sampler_destroy(a);
    sl_sampler_destroy(b);
    sl_sampler_destroy(c);
  }
}

/* Every order, several worlds, both drop_last settings: ranks get the same
 * batch count; non-padding samples are disjoint across ranks; with padding
 * the ranks cover the dataset; with drop_last at most W*B-1 are dropped. */
static void test_sharding(void **state) {
  const uint64_t n = 1003, bs = 7;
  for (int o = 0; o < 3; o++)
    for (uint64_t world = 1; world <= 5; world++)
      for (int drop = 0; drop < 2; drop++) {
        uint32_t *count = calloc(n, sizeof *count);
        uint64_t batches = 0;
        for (uint64_t r = 0; r < world; r++) {
          sl_sampler *s = mk(n, bs, r, world, (sl_order)o, 11, drop);
          if (r == 0)
            batches = sl_sampler_batches(s);
          assert_int_equal(sl_sampler_batches(s), batches);
          sl_sampler_set_epoch(s, 4);
          for (uint64_t p = 0; p < batches * bs; p++)
            count[sl_sampler_at(s, p)]++;
          sl_sampler_destroy(s);
        }
        uint64_t total = batches * bs * world, covered = 0, repeats = 0;
        for (uint64_t i = 0; i < n; i++) {
          covered += count[i] > 0;
          repeats += count[i] > 1 ? count[i] - 1 : 0;
        }
        if (drop) {
          assert_int_equal(batches, n / (world * bs));
          assert_int_equal(repeats, 0); /* disjoint */
          assert_int_equal(covered, total);
          assert_true(n - covered < world * bs);
        } else {
          assert_int_equal(batches, (n + world * bs - 1) / (world * bs));
          assert_int_equal(covered, n);         /* cover */
          assert_int_equal(repeats, total - n); /* only padding repeats */
        }
        free(count);
      }
}

/* quasi_random: each run of block*window positions reads at most window
 * blocks of the file (the working-set bound in sampler.h). */
static void test_quasi_window(void **state) {
  const uint64_t n = 1000, q = 8, w = 4;
  sl_sampler *s = mk(n, 10, 0, 1, SL_ORDER_QUASI, 5, true);
  sl_sampler_set_epoch(s, 1);
  for (uint64_t start = 0; start < n; start += q * w) {
    uint64_t blocks[64];
    int nb = 0;
    for (uint64_t p = start; p < start + q * w && p < n; p++) {
      uint64_t b = sl_sampler_at(s, p) / q;
      int known = 0;
      for (int k = 0; k < nb; k++)
        known |= blocks[k] == b;
      if (!known)
        blocks[nb++] = b;
    }
    assert_true(nb <= (int)w);
  }
  sl_sampler_destroy(s);
}

/* Files of varying sample counts (WebDataset shards) as quasi blocks: with
 * a window of one block, each file's samples are read in one run, and
 * every sample once. */
static void test_quasi_files(void **state) {
  (void)state;
  const uint64_t first[] = {0, 3, 10, 11, 30}, n = 37, nf = 5;
  sl_sampler_config c = {.count = n,
                         .batch_size = 1,
                         .world_size = 1,
                         .order = SL_ORDER_QUASI,
                         .seed = 9,
                         .quasi_block = 8, /* not used: the files are */
                         .quasi_window = 1,
                         .file_first = first,
                         .nfiles = nf};
  sl_sampler *s = NULL;
  sl_err err;
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_OK);
  for (uint64_t epoch = 0; epoch < 3; epoch++) {
    sl_sampler_set_epoch(s, epoch);
    uint8_t seen[37] = {0};
    uint64_t p = 0;
    while (p < n) {
      uint64_t i = sl_sampler_at(s, p), f = nf - 1;
      while (first[f] > i)
        f--;
      uint64_t len = (f + 1 < nf ? first[f + 1] : n) - first[f];
      for (uint64_t k = 0; k < len; k++, p++) { /* the whole file, now */
        uint64_t j = sl_sampler_at(s, p);
        assert_true(j >= first[f] && j < first[f] + len);
        assert_int_equal(seen[j]++, 0);
      }
    }
  }
  sl_sampler_destroy(s);
}

static void test_bad_settings(void **state) {
  sl_sampler *s = NULL;
  sl_err err;
  sl_sampler_config c = {.count = 10,
                         .batch_size = 4,
                         .rank = 0,
                         .world_size = 3,
                         .order = SL_ORDER_RANDOM,
                         .drop_last = true,
                         .quasi_block = 1,
                         .quasi_window = 1};
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_ECONFIG);
  assert_null(s);
  assert_non_null(strstr(err.msg, "drop_last"));
  c.drop_last = false; /* padding makes it work: one batch each */
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_OK);
  assert_int_equal(sl_sampler_batches(s), 1);
  sl_sampler_destroy(s);
  c.count = 0;
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_EINVAL);
  c.count = 10;
  c.rank = 3;
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_EINVAL);
}

static void test_schedule(void **state) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  sl_settings set;
  const sl_schedule *s = &set.sched;
  /* constant */
  assert_int_equal(sl_config_set(cfg, "resolution.max", "192"), SL_OK);
  sl_settings_read(&set, cfg);
  assert_int_equal(sl_schedule_res(s, 0), 192);
  assert_int_equal(sl_schedule_res(s, 99), 192);
  assert_int_equal(sl_schedule_max(s), 192);
  /* linear, as FFCV: min through start, max from end, rounded between */
  const char *lin[] = {
      "resolution.schedule",  "linear", "resolution.min",         "160",
      "resolution.max",       "224",    "resolution.start_epoch", "10",
      "resolution.end_epoch", "20",     "resolution.multiple",    "32"};
  for (int i = 0; i < 12; i += 2)
    assert_int_equal(sl_config_set(cfg, lin[i], lin[i + 1]), SL_OK);
  sl_settings_read(&set, cfg);
  assert_int_equal(sl_schedule_res(s, 0), 160);
  assert_int_equal(sl_schedule_res(s, 10), 160);
  assert_int_equal(sl_schedule_res(s, 12), 160); /* 172.8 → 160 */
  assert_int_equal(sl_schedule_res(s, 13), 192); /* 179.2 → 192 */
  assert_int_equal(sl_schedule_res(s, 15), 192);
  assert_int_equal(sl_schedule_res(s, 19), 224); /* 217.6 → 224 */
  assert_int_equal(sl_schedule_res(s, 20), 224);
  assert_int_equal(sl_schedule_res(s, 1000), 224);
  assert_int_equal(sl_schedule_max(s), 224);
  /* rounding never exceeds max */
  assert_int_equal(sl_config_set(cfg, "resolution.max", "210"), SL_OK);
  sl_settings_read(&set, cfg);
  for (uint64_t e = 0; e < 30; e++)
    assert_true(sl_schedule_res(s, e) <= 210);
  /* steps */
  assert_int_equal(sl_config_set(cfg, "resolution.schedule", "steps"), SL_OK);
  assert_int_equal(
      sl_config_set(cfg, "resolution.steps", "0:128, 6:256, 12:192"), SL_OK);
  assert_int_equal(sl_config_validate(cfg), SL_ECONFIG); /* 256 > max 210 */
  assert_int_equal(sl_config_set(cfg, "resolution.max", "256"), SL_OK);
  assert_int_equal(sl_config_validate(cfg), SL_OK);
  sl_settings_read(&set, cfg);
  assert_int_equal(sl_schedule_res(s, 0), 128);
  assert_int_equal(sl_schedule_res(s, 5), 128);
  assert_int_equal(sl_schedule_res(s, 6), 256);
  assert_int_equal(sl_schedule_res(s, 11), 256);
  assert_int_equal(sl_schedule_res(s, 12), 192);
  assert_int_equal(sl_schedule_max(s), 256);
  /* eval */
  assert_int_equal(sl_config_set(cfg, "loader.mode", "eval"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.eval", "288"), SL_OK);
  sl_settings_read(&set, cfg);
  assert_int_equal(sl_schedule_res(s, 3), 288);
  assert_int_equal(sl_schedule_max(s), 288);
  sl_config_destroy(cfg);
}

/* Elastic resume: 2 ranks read c batches of an epoch each; the rest dealt
 * on 1..4 ranks gives, with what they read, every sample exactly once
 * (drop_last off), every new rank the same batch count. With drop_last,
 * what is missing is the whole epoch's dropped tail plus the last
 * rest mod (W' x B) samples of the rest in the old order, nothing else. */
static void test_elastic_rest(void **state) {
  const uint64_t counts[] = {203, 96, 17};
  for (size_t ci = 0; ci < 3; ci++)
    for (int o = 0; o < 3; o++)
      for (int drop = 0; drop < 2; drop++) {
        const uint64_t n = counts[ci], bs = 5, w = 2;
        if (drop && n < w * bs)
          continue;
        sl_sampler *r0 = mk(n, bs, 0, w, (sl_order)o, 9, drop);
        const uint64_t nb = sl_sampler_batches(r0), per = nb * bs;
        sl_sampler *all = mk(n, bs, 0, 1, (sl_order)o, 9, false);
        sl_sampler_set_epoch(all, 3);
        const uint64_t cons[] = {0, 1, nb / 2, nb};
        for (int k = 0; k < 4; k++) {
          const uint64_t c = cons[k];
          uint32_t *before = calloc(n, sizeof *before);
          for (uint64_t r = 0; r < w; r++) {
            sl_sampler *s = mk(n, bs, r, w, (sl_order)o, 9, drop);
            sl_sampler_set_epoch(s, 3);
            for (uint64_t b = 0; b < c; b++)
              for (uint64_t j = 0; j < sl_sampler_valid(s, b); j++)
                before[sl_sampler_at(s, b * bs + j)]++;
            sl_sampler_destroy(s);
          }
          /* The rest, in the old order, as old global positions. */
          uint64_t *rest = malloc(n * sizeof *rest), m = 0;
          for (uint64_t r = 0; r < w; r++)
            for (uint64_t q = r * per + c * bs; q < (r + 1) * per; q++)
              if (q < n)
                rest[m++] = q;
          for (uint64_t w2 = 1; w2 <= 4; w2++) {
            if (drop && n < w2 * bs) /* a loader on w2 ranks refuses to open */
              continue;
            uint32_t *seen = calloc(n, sizeof *seen);
            memcpy(seen, before, n * sizeof *seen);
            uint64_t want_nb =
                drop ? m / (w2 * bs) : (m + w2 * bs - 1) / (w2 * bs);
            for (uint64_t r = 0; r < w2; r++) {
              sl_sampler *s = mk(n, bs, r, w2, (sl_order)o, 9, drop);
              sl_err err;
              sl_sampler_set_epoch(s, 3);
              assert_int_equal(
                  sl_sampler_set_rest(s, &(sl_sampler_deal){w, c}, 1, &err),
                  SL_OK);
              assert_int_equal(sl_sampler_batches(s), want_nb);
              for (uint64_t b = 0; b < want_nb; b++) {
                uint64_t v = sl_sampler_valid(s, b);
                if (drop)
                  assert_int_equal(v, bs);
                for (uint64_t j = 0; j < bs; j++) {
                  uint64_t i = sl_sampler_at(s, b * bs + j);
                  assert_true(i < n);
                  seen[i] += j < v;
                }
              }
              /* The next epoch is dealt whole again. */
              sl_sampler_set_epoch(s, 4);
              assert_int_equal(sl_sampler_batches(s),
                               drop ? n / (w2 * bs)
                                    : (n + w2 * bs - 1) / (w2 * bs));
              sl_sampler_destroy(s);
            }
            uint32_t *want = calloc(n, sizeof *want);
            for (uint64_t i = 0; i < n; i++)
              want[i] = 1;
            if (drop) {
              for (uint64_t q = w * per; q < n; q++)
                want[sl_sampler_at(all, q)] = 0;
              for (uint64_t q = m - m % (w2 * bs); q < m; q++)
                want[sl_sampler_at(all, rest[q])] = 0;
            }
            for (uint64_t i = 0; i < n; i++)
              if (seen[i] != want[i])
                fail_msg("n %llu order %d drop %d c %llu on %llu ranks: "
                         "sample %llu read %u times, want %u",
                         (unsigned long long)n, o, drop, (unsigned long long)c,
                         (unsigned long long)w2, (unsigned long long)i, seen[i],
                         want[i]);
            free(want);
            free(seen);
          }
          /* Beyond the old ranks' batches. */
          sl_err err;
          assert_int_equal(
              sl_sampler_set_rest(r0, &(sl_sampler_deal){w, nb + 1}, 1, &err),
              SL_EINVAL);
          free(rest);
          free(before);
        }
        sl_sampler_destroy(all);
        sl_sampler_destroy(r0);
      }
}

/* Reads batches [from, to) of every rank of a deal on `world` ranks after
 * the past deals, counting each valid sample in seen; returns the deal's
 * batches per rank. */
static uint64_t read_deal(uint64_t n, uint64_t bs, uint64_t world, sl_order o,
                          const sl_sampler_deal *past, uint32_t npast,
                          uint64_t from, uint64_t to, uint32_t *seen) {
  uint64_t nb = 0;
  for (uint64_t r = 0; r < world; r++) {
    sl_sampler *s = mk(n, bs, r, world, o, 9, false);
    sl_err err;
    sl_sampler_set_epoch(s, 2);
    if (npast)
      assert_int_equal(sl_sampler_set_rest(s, past, npast, &err), SL_OK);
    nb = sl_sampler_batches(s);
    for (uint64_t b = from; b < (to < nb ? to : nb); b++)
      for (uint64_t j = 0; j < sl_sampler_valid(s, b); j++)
        seen[sl_sampler_at(s, b * bs + j)]++;
    sl_sampler_destroy(s);
  }
  return nb;
}

/* An epoch resumed on another world size, then again and again (2 -> 3 ->
 * 1 -> 4 ranks, each reading part of its deal): every sample read exactly
 * once over all the deals, and progress_of counts what was read; more
 * than SL_SAMPLER_DEALS_MAX deals are refused. */
static void test_elastic_rest_again(void **state) {
  const uint64_t n = 301, bs = 4;
  const uint64_t worlds[] = {2, 3, 1, 4, 2};
  const uint64_t reads[] = {5, 4, 7, 2};
  for (int o = 0; o < 3; o++) {
    uint32_t *seen = calloc(n, sizeof *seen);
    sl_sampler_deal past[SL_SAMPLER_DEALS_MAX];
    uint32_t npast = 0;
    for (int d = 0; d < 4; d++) {
      read_deal(n, bs, worlds[d], (sl_order)o, past, npast, 0, reads[d], seen);
      past[npast++] = (sl_sampler_deal){worlds[d], reads[d]};
      sl_sampler_config c = {.count = n,
                             .batch_size = bs,
                             .world_size = worlds[d + 1],
                             .order = (sl_order)o,
                             .seed = 9,
                             .quasi_block = 8,
                             .quasi_window = 4};
      sl_sampler_progress pr;
      sl_err err;
      assert_int_equal(sl_sampler_progress_of(&c, past, npast, 0, &pr, &err),
                       SL_OK);
      uint64_t read = 0;
      for (uint64_t i = 0; i < n; i++)
        read += seen[i];
      assert_int_equal(pr.read, read);
      assert_int_equal(pr.read + pr.left, n);
    }
    read_deal(n, bs, worlds[4], (sl_order)o, past, npast, 0, UINT64_MAX, seen);
    for (uint64_t i = 0; i < n; i++)
      if (seen[i] != 1)
        fail_msg("order %d: sample %llu read %u times", o,
                 (unsigned long long)i, seen[i]);
    free(seen);
  }
  /* A deal on 2^32 - 1 ranks (a state blob may say so): counted at once,
   * not rank by rank. */
  sl_sampler_config c3 = {.count = n,
                          .batch_size = bs,
                          .world_size = 3,
                          .order = SL_ORDER_RANDOM,
                          .seed = 9,
                          .quasi_block = 8,
                          .quasi_window = 4};
  sl_sampler_deal huge = {UINT32_MAX, 0};
  sl_sampler_progress pr;
  sl_err e3;
  assert_int_equal(sl_sampler_progress_of(&c3, &huge, 1, 0, &pr, &e3), SL_OK);
  assert_int_equal(pr.read, 0);
  assert_int_equal(pr.left, n);
  sl_sampler *s = mk(n, bs, 0, 2, SL_ORDER_RANDOM, 9, false);
  sl_sampler_deal many[SL_SAMPLER_DEALS_MAX + 1];
  for (int d = 0; d <= SL_SAMPLER_DEALS_MAX; d++)
    many[d] = (sl_sampler_deal){2, 0};
  sl_err err;
  assert_int_equal(sl_sampler_set_rest(s, many, SL_SAMPLER_DEALS_MAX + 1, &err),
                   SL_EINVAL);
  assert_int_equal(sl_sampler_set_rest(s, many, SL_SAMPLER_DEALS_MAX, &err),
                   SL_OK);
  sl_sampler_destroy(s);
}

/* A mix of members with counts cnt and weights w, world 1, batch 1. */
static sl_status mk_mix(sl_sampler **out, const uint64_t *cnt, const double *w,
                        uint32_t n, sl_order order, bool each_once,
                        sl_err *err) {
  sl_dmix_member m[SL_DMIX_MAX];
  uint64_t total = 0;
  static const uint64_t files[] = {0, 5, 17, 40}; /* member 1's "shards" */
  for (uint32_t k = 0; k < n; k++) {
    m[k] = (sl_dmix_member){.count = cnt[k], .weight = w[k]};
    if (k == 1 && cnt[k] > 40) {
      m[k].file_first = files;
      m[k].nfiles = 4;
    }
    total += cnt[k];
  }
  sl_sampler_config c = {.count = total,
                         .batch_size = 1,
                         .world_size = 1,
                         .order = order,
                         .seed = 11,
                         .quasi_block = 4,
                         .quasi_window = 3,
                         .nmembers = n,
                         .members = m,
                         .each_once = each_once};
  return sl_sampler_create(out, &c, err);
}

/* Shares exact each epoch; each member's samples counted over epochs never
 * differ by more than one (without replacement, pass after pass); eval
 * reads everything once; the order is a pure function of the settings. */
static void test_dataset_mix(void **state) {
  const uint64_t cnt[3] = {500, 70, 9};
  const double w[3] = {5, 3, 2};
  /* 289.5, 173.7, 115.8: the two largest remainders round up */
  const uint64_t total = 579, want[3] = {289, 174, 116};
  for (int o = 0; o < 3; o++) {
    sl_sampler *s, *t;
    sl_err err;
    assert_int_equal(mk_mix(&s, cnt, w, 3, (sl_order)o, false, &err), SL_OK);
    assert_int_equal(mk_mix(&t, cnt, w, 3, (sl_order)o, false, &err), SL_OK);
    uint32_t *seen = calloc(total, sizeof *seen);
    for (uint64_t e = 0; e < 6; e++) {
      sl_sampler_set_epoch(s, e);
      sl_sampler_set_epoch(t, e);
      uint64_t share[3] = {0, 0, 0};
      for (uint64_t p = 0; p < total; p++) {
        uint64_t i = sl_sampler_at(s, p);
        assert_int_equal(i, sl_sampler_at(t, p));
        assert_true(i < total);
        seen[i]++;
        share[i < 500 ? 0 : i < 570 ? 1 : 2]++;
      }
      for (int k = 0; k < 3; k++)
        assert_int_equal(share[k], want[k]);
      uint64_t lo[3] = {0, 500, 570}, hi[3] = {500, 570, 579};
      for (int k = 0; k < 3; k++) {
        uint32_t mn = UINT32_MAX, mx = 0;
        for (uint64_t i = lo[k]; i < hi[k]; i++) {
          mn = seen[i] < mn ? seen[i] : mn;
          mx = seen[i] > mx ? seen[i] : mx;
        }
        assert_true(mx - mn <= 1);
      }
    }
    free(seen);
    sl_sampler_destroy(t);
    /* Evaluation: every sample once an epoch, whatever the weights. */
    sl_sampler_destroy(s);
    assert_int_equal(mk_mix(&s, cnt, w, 3, (sl_order)o, true, &err), SL_OK);
    for (uint64_t e = 0; e < 2; e++) {
      sl_sampler_set_epoch(s, e);
      uint8_t *once = calloc(total, 1);
      for (uint64_t p = 0; p < total; p++)
        once[sl_sampler_at(s, p)]++;
      for (uint64_t i = 0; i < total; i++)
        assert_int_equal(once[i], 1);
      free(once);
    }
    sl_sampler_destroy(s);
  }
  /* Refusals: a weight too small for any sample, counts that do not sum. */
  sl_sampler *s = NULL;
  sl_err err;
  const double tiny[2] = {1, 1e-9};
  assert_int_equal(mk_mix(&s, cnt, tiny, 2, SL_ORDER_RANDOM, false, &err),
                   SL_ECONFIG);
  assert_non_null(strstr(err.msg, "dataset 2's weight"));
  /* Weights whose sum overflows a double: the shares still hold. */
  const uint64_t two[2] = {500, 500};
  const double big[2] = {1e308, 1e308};
  assert_int_equal(mk_mix(&s, two, big, 2, SL_ORDER_RANDOM, false, &err),
                   SL_OK);
  uint64_t first_half = 0;
  for (uint64_t p = 0; p < 1000; p++)
    first_half += sl_sampler_at(s, p) < 500;
  assert_int_equal(first_half, 500);
  sl_sampler_destroy(s);
  s = NULL;
  sl_dmix_member m = {.count = 5, .weight = 1};
  sl_sampler_config c = {.count = 6,
                         .batch_size = 1,
                         .world_size = 1,
                         .quasi_block = 1,
                         .quasi_window = 1,
                         .nmembers = 1,
                         .members = &m};
  assert_int_equal(sl_sampler_create(&s, &c, &err), SL_EINVAL);
  assert_null(s);
}

static void test_dmix_spec(void **state) {
  sl_dmix_spec sp;
  sl_err err;
  assert_int_equal(sl_dmix_spec_parse(&sp, "", "", &err), SL_OK);
  assert_int_equal(sp.n, 0);
  assert_int_equal(
      sl_dmix_spec_parse(&sp, " a.lmdb ,s3://b/c ", "3, 1.5", &err), SL_OK);
  assert_int_equal(sp.n, 2);
  sl_dmix_spec copy = sp; /* paths are offsets: a copy stays whole */
  assert_string_equal(sl_dmix_spec_path(&copy, 0), "a.lmdb");
  assert_string_equal(sl_dmix_spec_path(&copy, 1), "s3://b/c");
  assert_true(copy.weight[1] == 1.5);
  static const struct {
    const char *paths, *weights, *says;
  } bad[] = {
      {"", "1", "dataset.mix is not"},
      {"a, ,b", "1,1,1", "item 2"},
      {"a,b", "1", "1 weight for the 2"},
      {"a,b", "1,1,1", "3 weights"},
      {"a,b", "1,0", "weigh"},
      {"a,b", "1,-2", "must be a number > 0"},
      {"a,b", "1,nan", "must be a number > 0"},
      {"a,b", "1,inf", "must be a number > 0"},
      {"a,b", "1,x", "must be a number > 0"},
      {"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "1", "more than 16"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(
        sl_dmix_spec_parse(&sp, bad[i].paths, bad[i].weights, &err),
        SL_ECONFIG);
    if (!strstr(err.msg, bad[i].says))
      fail_msg("%s / %s: %s", bad[i].paths, bad[i].weights, err.msg);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_orders_are_permutations),
      cmocka_unit_test(test_order_pure_function),
      cmocka_unit_test(test_sharding),
      cmocka_unit_test(test_quasi_window),
      cmocka_unit_test(test_quasi_files),
      cmocka_unit_test(test_bad_settings),
      cmocka_unit_test(test_schedule),
      cmocka_unit_test(test_elastic_rest),
      cmocka_unit_test(test_elastic_rest_again),
      cmocka_unit_test(test_dataset_mix),
      cmocka_unit_test(test_dmix_spec),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
