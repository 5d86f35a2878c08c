/* The loader with a synthetic source (fake_src.h): determinism across worker
 * counts, resume (in-process and in a forked process), sharding through the
 * API, shapes at every resolution of a schedule, bad samples (fail, skip),
 * slot reuse with a slow consumer, misuse, and cleanliness (threads, fds,
 * memory) over epochs and open/close cycles; the host ring backend trading
 * buffers instead of copying. Run under TSan too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_src.h"
#include "loader/ring.h"
#include "support/proc.h"

typedef struct opts {
  uint64_t count;
  int workers;
  const char *seed, *order, *batch, *drop_last, *dtype, *staging, *prefetch;
  const char *rank, *world, *on_error, *schedule, *steps;
  const char *mode; /* NULL: train */
  int delay_us;
  const uint8_t *bad;
} opts;

static opts defaults(void) {
  opts o = {.count = 203,
            .workers = 2,
            .seed = "5",
            .order = "random",
            .batch = "8",
            .drop_last = "false",
            .dtype = "u8",
            .staging = "2",
            .prefetch = "3",
            .rank = "0",
            .world = "1",
            .on_error = "fail",
            .schedule = "steps",
            .steps = "0:8, 1:12, 3:16"};
  return o;
}

static sl_dtype dtype_of(const char *s) {
  return strcmp(s, "u8") == 0     ? SL_DTYPE_U8
         : strcmp(s, "fp16") == 0 ? SL_DTYPE_FP16
         : strcmp(s, "bf16") == 0 ? SL_DTYPE_BF16
                                  : SL_DTYPE_FP32;
}

static sl_loader *open_loader(const opts *o) {
  char workers[16];
  snprintf(workers, sizeof workers, "%d", o->workers);
  const char *kv[] = {"loader.workers",
                      workers,
                      "loader.seed",
                      o->seed,
                      "loader.order",
                      o->order,
                      "loader.batch_size",
                      o->batch,
                      "loader.drop_last",
                      o->drop_last,
                      "augment.dtype",
                      o->dtype,
                      "device.staging",
                      o->staging,
                      "device.prefetch",
                      o->prefetch,
                      "loader.world_size",
                      o->world,
                      "loader.rank",
                      o->rank,
                      "loader.on_error",
                      o->on_error,
                      "resolution.schedule",
                      o->schedule,
                      "resolution.steps",
                      o->steps,
                      "loader.quasi_block",
                      "4",
                      "loader.quasi_window",
                      "3",
                      "resolution.eval",
                      "8",
                      "loader.mode",
                      o->mode ? o->mode : "train",
                      NULL};
  sl_config *cfg = make_cfg(kv);
  assert_non_null(cfg);
  fake_ctx fc = {.seed = strtoull(o->seed, NULL, 10),
                 .dtype = dtype_of(o->dtype),
                 .channels = 3,
                 .delay_us = o->delay_us,
                 .bad = o->bad};
  sl_sample_src src = fake_src(o->count, &fc);
  sl_loader *ld = NULL;
  sl_status st = sl_loader_open_with(&ld, cfg, &src, NULL);
  if (st != SL_OK)
    fprintf(stderr, "open: %s\n", sl_loader_errmsg(ld));
  assert_int_equal(st, SL_OK);
  sl_config_destroy(cfg);
  return ld;
}

/* Hash of every batch of epochs [e0, e1), checking each batch's bytes. */
static uint64_t run_epochs(sl_loader *ld, const opts *o, uint64_t e0,
                           uint64_t e1) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t e = e0; e < e1; e++) {
    assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
    sl_batch b;
    uint64_t k = 0;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      assert_int_equal(b.epoch, e);
      assert_int_equal(b.index, k++);
      assert_true(
          fake_batch_ok(&b, strtoull(o->seed, NULL, 10), dtype_of(o->dtype)));
      h = hash_batch(h, &b);
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    assert_int_equal(st, SL_END);
    assert_int_equal(k, sl_loader_batches_per_epoch(ld));
  }
  return h;
}

/* Same seed: bit-identical with 1, 2 and 8 workers; another seed differs. */
static void test_workers_deterministic(void **state) {
  opts o = defaults();
  o.delay_us = 200; /* completion order varies between threads */
  uint64_t h[3];
  int workers[3] = {1, 2, 8};
  for (int i = 0; i < 3; i++) {
    o.workers = workers[i];
    sl_loader *ld = open_loader(&o);
    h[i] = run_epochs(ld, &o, 0, 3);
    sl_loader_close(ld);
  }
  assert_true(h[0] == h[1] && h[1] == h[2]);
  o.seed = "6";
  o.workers = 2;
  sl_loader *ld = open_loader(&o);
  assert_true(run_epochs(ld, &o, 0, 3) != h[0]);
  sl_loader_close(ld);
}

/* The hash of the batches of epoch e from batch k on. */
static uint64_t hash_from(sl_loader *ld, const opts *o, uint64_t k_expect) {
  uint64_t h = 0xcbf29ce484222325ULL;
  sl_batch b;
  sl_status st;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.index, k_expect++);
    assert_true(
        fake_batch_ok(&b, strtoull(o->seed, NULL, 10), dtype_of(o->dtype)));
    h = hash_batch(h, &b);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(st, SL_END);
  return h;
}

/* Save at batch k of epoch 1, restore in a second loader (other worker
 * count) and in a forked process: the remaining batches equal an
 * uninterrupted run's. */
static void test_resume(void **state) {
  opts o = defaults();
  o.order = "quasi_random";
  const uint64_t k = 7;
  sl_loader *ld = open_loader(&o);
  /* Uninterrupted: hash of epoch 1 from batch k. */
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  sl_batch b;
  for (uint64_t i = 0; i < k; i++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = 0;
  assert_int_equal(sl_loader_save_state(ld, NULL, &len), SL_ETOOBIG);
  assert_int_equal(len, SL_LOADER_STATE_BYTES);
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  uint64_t want = hash_from(ld, &o, k);
  sl_loader_close(ld);

  /* A second loader in this process, with 5 workers. */
  o.workers = 5;
  ld = open_loader(&o);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_OK);
  assert_int_equal(hash_from(ld, &o, k), want);
  sl_loader_close(ld);

  /* A new process: no loader threads exist at the fork. */
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    ld = open_loader(&o);
    uint64_t got = 0;
    if (sl_loader_restore_state(ld, blob, len) == SL_OK)
      got = hash_from(ld, &o, k);
    sl_loader_close(ld);
    ssize_t w = write(fds[1], &got, sizeof got);
    _exit(w == (ssize_t)sizeof got ? 0 : 1);
  }
  close(fds[1]);
  uint64_t got = 0;
  assert_int_equal(read(fds[0], &got, sizeof got), (ssize_t)sizeof got);
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(got, want);
}

/* Reads the rest of the epoch in progress, from batch `first` of its
 * deal: counts each valid sample in seen, checks the batch count against
 * sl_loader_epoch_batches and returns the batches' hash. */
static uint64_t read_rest(sl_loader *ld, const opts *o, uint64_t first,
                          uint32_t *seen) {
  uint64_t h = 0xcbf29ce484222325ULL, got = 0;
  uint64_t want = sl_loader_epoch_batches(ld) - first;
  sl_batch b;
  sl_status st;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_true(
        fake_batch_ok(&b, strtoull(o->seed, NULL, 10), dtype_of(o->dtype)));
    for (uint32_t j = 0; j < b.valid; j++)
      seen[b.indices[j]]++;
    h = hash_batch(h, &b);
    assert_int_equal(b.index, first + got++);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(st, SL_END);
  assert_int_equal(got, want);
  return h;
}

/* Elastic resume (issue 39): 2 ranks read k batches of epoch 1 each and
 * save; the state (rank 0's or rank 1's) restores on 1, 3 and 4 ranks,
 * whose valid samples with those read before cover the epoch exactly once
 * (drop_last off); with drop_last the rest's last rest mod (W' x batch)
 * samples are dropped and nothing is read twice. A second resume from the
 * same state with another worker count gives the same batches; the next
 * epoch is dealt whole on the new world size; the state's info says where
 * the epoch stood. */
static void test_elastic_resume(void **state) {
  for (int drop = 0; drop < 2; drop++) {
    opts o = defaults();
    o.count = 203;
    o.order = "quasi_random";
    o.drop_last = drop ? "true" : "false";
    o.world = "2";
    const uint64_t k = 5, n = o.count, bs = 8;
    uint32_t before[203] = {0};
    uint8_t blob[2][SL_LOADER_STATE_BYTES];
    size_t len = SL_LOADER_STATE_BYTES;
    uint64_t nb_old = 0;
    for (int r = 0; r < 2; r++) {
      o.rank = r ? "1" : "0";
      sl_loader *ld = open_loader(&o);
      nb_old = sl_loader_batches_per_epoch(ld);
      assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
      for (uint64_t i = 0; i < k; i++) {
        sl_batch b;
        assert_int_equal(sl_loader_next(ld, &b), SL_OK);
        for (uint32_t j = 0; j < b.valid; j++)
          before[b.indices[j]]++;
        assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
      }
      len = SL_LOADER_STATE_BYTES;
      assert_int_equal(sl_loader_save_state(ld, blob[r], &len), SL_OK);
      sl_loader_close(ld);
    }
    sl_loader_state_info info;
    assert_int_equal(sl_loader_state_info_get(blob[1], len, &info), SL_OK);
    assert_int_equal(info.version, 5);
    assert_int_equal(info.epoch, 1);
    assert_int_equal(info.batches, k);
    assert_int_equal(info.samples_read, 2 * k * bs);
    assert_int_equal(info.samples_left,
                     drop ? 2 * (nb_old - k) * bs : n - 2 * k * bs);
    assert_int_equal(info.rank, 1);
    assert_int_equal(info.world_size, 2);
    assert_int_equal(info.batch_size, bs);
    assert_int_equal(info.resumed_from_world, 0);
    const uint64_t left = info.samples_left;
    for (uint64_t w2 = 1; w2 <= 4; w2++) {
      char world[4], rank[4];
      snprintf(world, sizeof world, "%llu", (unsigned long long)w2);
      o.world = world;
      uint32_t seen[203];
      memcpy(seen, before, sizeof seen);
      uint64_t hash[4] = {0};
      for (uint64_t r = 0; r < w2; r++) {
        snprintf(rank, sizeof rank, "%llu", (unsigned long long)r);
        o.rank = rank;
        o.workers = 2;
        sl_loader *ld = open_loader(&o);
        if (sl_loader_restore_state(ld, blob[r % 2], len) != SL_OK)
          fail_msg("%s", sl_loader_errmsg(ld));
        uint64_t wb = w2 * bs;
        uint64_t want_nb = w2 == 2 ? nb_old
                           : drop  ? left / wb
                                   : (left + wb - 1) / wb;
        assert_int_equal(sl_loader_epoch_batches(ld), want_nb);
        hash[r] = read_rest(ld, &o, w2 == 2 ? k : 0, seen);
        /* A state saved at the end of the resumed epoch says so. */
        uint8_t end[SL_LOADER_STATE_BYTES];
        size_t elen = sizeof end;
        assert_int_equal(sl_loader_save_state(ld, end, &elen), SL_OK);
        sl_loader_state_info ei;
        assert_int_equal(sl_loader_state_info_get(end, elen, &ei), SL_OK);
        assert_int_equal(ei.samples_left, 0);
        assert_int_equal(ei.resumed_from_world, w2 == 2 ? 0 : 2);
        /* The next epoch: dealt whole on w2 ranks. */
        assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
        assert_int_equal(sl_loader_epoch_batches(ld),
                         sl_loader_batches_per_epoch(ld));
        sl_loader_close(ld);
        /* Again from the same state, other workers: the same batches. */
        o.workers = 5;
        ld = open_loader(&o);
        assert_int_equal(sl_loader_restore_state(ld, blob[0], len), SL_OK);
        uint32_t again[203] = {0};
        assert_int_equal(read_rest(ld, &o, w2 == 2 ? k : 0, again), hash[r]);
        sl_loader_close(ld);
      }
      uint64_t twice = 0, missing = 0;
      for (uint64_t i = 0; i < n; i++) {
        twice += seen[i] > 1;
        missing += seen[i] == 0;
      }
      assert_int_equal(twice, 0);
      if (!drop)
        assert_int_equal(missing, 0);
      else if (w2 == 2) /* the same deal: the epoch's own dropped tail */
        assert_int_equal(missing, n - 2 * nb_old * bs);
      else
        assert_int_equal(missing, n - 2 * nb_old * bs + left % (w2 * bs));
    }
  }
}

/* A state saved in an epoch resumed on 3 ranks (from 2) restores on 3
 * ranks with the batches that run would have given, and on 4 (the rest of
 * the rest: the sampler's tests check that it covers the epoch once); its
 * info says how many times it was resumed. A version 4 blob (128 bytes,
 * one earlier deal) restores as it did. */
static void test_elastic_resume_twice(void **state) {
  opts o = defaults();
  o.world = "2";
  sl_loader *ld = open_loader(&o);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  uint8_t blob[SL_LOADER_STATE_BYTES], mid[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  sl_loader_close(ld);
  o.world = "3";
  o.rank = "2";
  ld = open_loader(&o);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_OK);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(sl_loader_save_state(ld, mid, &len), SL_OK);
  uint64_t want = hash_from(ld, &o, 2);
  sl_loader_close(ld);
  ld = open_loader(&o);
  assert_int_equal(sl_loader_restore_state(ld, mid, len), SL_OK);
  assert_int_equal(hash_from(ld, &o, 2), want);
  sl_loader_close(ld);
  sl_loader_state_info mi;
  assert_int_equal(sl_loader_state_info_get(mid, len, &mi), SL_OK);
  assert_int_equal(mi.resumes, 1);
  assert_int_equal(mi.resumed_from_world, 2);
  assert_int_equal(mi.resumed_from_batches, 3);
  o.world = "4";
  o.rank = "0";
  ld = open_loader(&o);
  if (sl_loader_restore_state(ld, mid, len) != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  uint8_t deeper[SL_LOADER_STATE_BYTES];
  assert_int_equal(sl_loader_save_state(ld, deeper, &len), SL_OK);
  sl_loader_close(ld);
  assert_int_equal(sl_loader_state_info_get(deeper, len, &mi), SL_OK);
  assert_int_equal(mi.resumes, 2);
  assert_int_equal(mi.resumed_from_world, 3);
  assert_int_equal(mi.resumed_from_batches, 2);
  assert_int_equal(mi.batches, 1);
  /* The same state as version 4 (128 bytes: the earlier deal at 64): the
   * same batches on 3 ranks. */
  uint8_t v4[SL_LOADER_STATE_BYTES];
  memcpy(v4, mid, sizeof v4);
  v4[8] = 4;
  v4[12] = 128;
  v4[13] = 0;
  v4[78] = v4[79] = 0;
  uint64_t sum4 = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 120; i++)
    sum4 = (sum4 ^ v4[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    v4[120 + i] = (uint8_t)(sum4 >> (8 * i));
  o.world = "3";
  o.rank = "2";
  ld = open_loader(&o);
  if (sl_loader_restore_state(ld, v4, 128) != SL_OK)
    fail_msg("version 4: %s", sl_loader_errmsg(ld));
  assert_int_equal(hash_from(ld, &o, 2), want);
  sl_loader_close(ld);
  o.world = "4";
  o.rank = "0";
  /* A version 3 blob (u64 rank and world size at 56 and 64) restores,
   * on another world size too. */
  uint8_t v3[SL_LOADER_STATE_BYTES];
  memcpy(v3, blob, sizeof v3);
  v3[8] = 3;
  v3[12] = 128;
  v3[13] = 0;
  memset(v3 + 56, 0, 16);
  memcpy(v3 + 56, blob + 56, 4);
  memcpy(v3 + 64, blob + 60, 4);
  uint64_t sum = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 120; i++)
    sum = (sum ^ v3[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    v3[120 + i] = (uint8_t)(sum >> (8 * i));
  ld = open_loader(&o);
  if (sl_loader_restore_state(ld, v3, len) != SL_OK)
    fail_msg("version 3: %s", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  sl_loader_state_info info;
  assert_int_equal(sl_loader_state_info_get(v3, len, &info), SL_OK);
  assert_int_equal(info.version, 3);
  assert_int_equal(info.world_size, 2);
  assert_int_equal(info.batches, 3);
  /* The state info of a damaged blob: refused, zeroed. */
  mid[30] ^= 1;
  assert_int_equal(sl_loader_state_info_get(mid, len, &info), SL_EINVAL);
  assert_int_equal(info.version, 0);
  assert_int_equal(sl_loader_state_info_get(NULL, len, &info), SL_EINVAL);
}

/* sl_loader_unget: the batch just received goes back; the state no longer
 * counts it and the next call returns it again. Only the last batch, once,
 * unreleased. */
static void test_unget(void **state) {
  (void)state;
  opts o = defaults();
  sl_loader *ld = open_loader(&o);
  assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
  sl_batch b, c;
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  uint8_t before[SL_LOADER_STATE_BYTES], after[SL_LOADER_STATE_BYTES];
  size_t len = sizeof before;
  assert_int_equal(sl_loader_save_state(ld, before, &len), SL_OK);
  sl_loader_stats st0, st1;
  assert_int_equal(sl_loader_stats_get(ld, &st0), SL_OK);

  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(b.index, 1);
  uint64_t first_sample = b.indices[0];
  assert_int_equal(sl_loader_unget(ld, &b), SL_OK);
  assert_null(b.data); /* cleared */
  len = sizeof after;
  assert_int_equal(sl_loader_save_state(ld, after, &len), SL_OK);
  assert_memory_equal(before, after, sizeof before);
  assert_int_equal(sl_loader_stats_get(ld, &st1), SL_OK);
  assert_int_equal(st1.batches, st0.batches);
  assert_int_equal(st1.epoch_batches, st0.epoch_batches);
  /* Handed back twice, or a batch that is not the last: refused. */
  assert_int_equal(sl_loader_unget(ld, &b), SL_EINVAL);

  assert_int_equal(sl_loader_next(ld, &b), SL_OK); /* the same batch */
  assert_int_equal(b.index, 1);
  assert_int_equal(b.indices[0], first_sample);
  assert_true(fake_batch_ok(&b, 5, SL_DTYPE_U8));
  assert_int_equal(sl_loader_next(ld, &c), SL_OK);
  assert_int_equal(c.index, 2);
  assert_int_equal(sl_loader_unget(ld, &b), SL_EINVAL); /* not the last */
  assert_non_null(strstr(sl_loader_errmsg(ld), "not the last"));
  assert_int_equal(sl_batch_release(ld, &c, NULL), SL_OK);
  assert_int_equal(sl_loader_unget(ld, &c), SL_EINVAL); /* released */
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  /* After a new epoch, nothing to hand back. */
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  sl_batch old = b;
  assert_int_equal(sl_loader_start_epoch(ld, 3), SL_OK);
  assert_int_equal(sl_loader_unget(ld, &old), SL_EINVAL);
  assert_int_equal(sl_batch_release(ld, &old, NULL), SL_OK);
  /* The rest of epoch 2 after an unget is what an uninterrupted run gives. */
  assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(sl_loader_unget(ld, &b), SL_OK);
  uint64_t h = hash_from(ld, &o, 3);
  assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  assert_int_equal(hash_from(ld, &o, 3), h);
  sl_loader_close(ld);
}

/* A blob from other settings, a damaged one, and saving before any epoch. */
static void test_resume_refused(void **state) {
  opts o = defaults();
  sl_loader *ld = open_loader(&o);
  uint8_t blob[SL_LOADER_STATE_BYTES];
  size_t len = sizeof blob;
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_ESTATE);
  assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
  assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
  sl_loader_close(ld);
  o.seed = "77";
  ld = open_loader(&o);
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_ESTATE);
  assert_non_null(strstr(sl_loader_errmsg(ld), "loader.seed"));
  /* A version 1 blob (before the dataset and settings fingerprints). */
  uint8_t v1[SL_LOADER_STATE_BYTES];
  memcpy(v1, blob, sizeof v1);
  v1[8] = 1;
  assert_int_equal(sl_loader_restore_state(ld, v1, 96), SL_EINVAL);
  if (!strstr(sl_loader_errmsg(ld), "version 1"))
    fail_msg("%s", sl_loader_errmsg(ld));
  blob[20] ^= 1;
  assert_int_equal(sl_loader_restore_state(ld, blob, len), SL_EINVAL);
  assert_int_equal(sl_loader_restore_state(ld, blob, 10), SL_EINVAL);
  sl_loader_close(ld);
}

/* The schedule and augmentation fingerprints of the state blob (bytes
 * 104..119) are pinned: blobs saved by earlier builds must keep restoring,
 * so however the settings are read, the bytes hashed must not change. */
static void test_state_fingerprints_pinned(void **state) {
  (void)state;
  static const char *const cases[][32] = {
      {"resolution.schedule", "steps", "resolution.steps", "0:8, 1:12, 3:16",
       NULL},
      {"resolution.schedule",
       "linear",
       "resolution.min",
       "8",
       "resolution.max",
       "24",
       "resolution.start_epoch",
       "2",
       "resolution.end_epoch",
       "5",
       "resolution.multiple",
       "4",
       "augment.crop",
       "center",
       "augment.center_ratio",
       "0.9",
       "augment.flip",
       "0.25",
       "augment.mean",
       "0.5",
       "augment.std",
       "0.25",
       "augment.filter",
       "bilinear",
       NULL},
      {"resolution.schedule", "constant", "resolution.max", "16",
       "augment.color_jitter", "0.4, 0.4, 0.4, 0.1", "augment.auto",
       "randaugment", "augment.erasing", "0.25", "augment.blur_sigma",
       "0.5, 1.5", "augment.scale", "0.3, 0.9", "augment.ratio", "0.5, 2",
       NULL},
      {"loader.mode", "eval", "resolution.eval", "12", "augment.auto",
       "trivial", "augment.flip", "0.7", "augment.crop", "random_resized",
       NULL},
      {"resolution.schedule", "constant", "resolution.max", "8", "augment.crop",
       "none", "augment.label_smoothing", "0.1", "augment.num_classes", "10",
       NULL},
  };
  static const uint64_t want[][2] = {
      {0xdb9587d7cfe7e3dcULL, 0x710a90a7d7c97be1ULL},
      {0xc2e0495a07698293ULL, 0x75946c694f5e3fa6ULL},
      {0x4b92cf656f623d86ULL, 0xc93c49713ec7219bULL},
      {0xce9a65c3c3a55f41ULL, 0x677e3a028474cb9dULL},
      {0xab8a7f20e2dd9df7ULL, 0x619670ee5dbf4fb1ULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *kv[48] = {"augment.dtype",  "u8", "loader.batch_size", "4",
                          "loader.workers", "1"};
    size_t n = 6;
    for (size_t j = 0; cases[i][j]; j++)
      kv[n++] = cases[i][j];
    kv[n] = NULL;
    sl_config *cfg = make_cfg(kv);
    assert_non_null(cfg);
    fake_ctx fc = {.seed = 1, .dtype = SL_DTYPE_U8, .channels = 3};
    sl_sample_src src = fake_src(40, &fc);
    sl_loader *ld = NULL;
    sl_status st = sl_loader_open_with(&ld, cfg, &src, NULL);
    if (st != SL_OK)
      fail_msg("case %zu: %s", i, sl_loader_errmsg(ld));
    sl_config_destroy(cfg);
    assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
    uint8_t blob[SL_LOADER_STATE_BYTES];
    size_t len = sizeof blob;
    assert_int_equal(sl_loader_save_state(ld, blob, &len), SL_OK);
    sl_loader_close(ld);
    uint64_t fp[2] = {0, 0};
    for (int k = 0; k < 2; k++)
      for (int b = 0; b < 8; b++)
        fp[k] |= (uint64_t)blob[104 + 8 * k + b] << (8 * b);
    if (fp[0] != want[i][0] || fp[1] != want[i][1])
      fail_msg("case %zu: fingerprints 0x%016llxULL, 0x%016llxULL; pinned "
               "0x%016llxULL, 0x%016llxULL",
               i, (unsigned long long)fp[0], (unsigned long long)fp[1],
               (unsigned long long)want[i][0], (unsigned long long)want[i][1]);
  }
}

/* Through the API, every order: ranks' samples are disjoint and cover the
 * dataset (padding), every rank has the same batch count; drop_last gives
 * whole batches only and no repeats. */
static void test_sharding_api(void **state) {
  const char *orders[] = {"sequential", "random", "quasi_random"};
  opts o = defaults();
  o.count = 101;
  o.batch = "4";
  o.world = "3";
  for (int oi = 0; oi < 3; oi++)
    for (int drop = 0; drop < 2; drop++) {
      o.order = orders[oi];
      o.drop_last = drop ? "true" : "false";
      uint32_t count[101] = {0};
      uint64_t nb = 0, total = 0;
      for (int r = 0; r < 3; r++) {
        char rank[4];
        snprintf(rank, sizeof rank, "%d", r);
        o.rank = rank;
        sl_loader *ld = open_loader(&o);
        if (r == 0)
          nb = sl_loader_batches_per_epoch(ld);
        assert_int_equal(sl_loader_batches_per_epoch(ld), nb);
        assert_int_equal(sl_loader_start_epoch(ld, 3), SL_OK);
        sl_batch b;
        uint64_t got = 0;
        while (sl_loader_next(ld, &b) == SL_OK) {
          assert_int_equal(b.n, 4);
          if (drop)
            assert_int_equal(b.valid, b.n);
          for (uint32_t j = 0; j < b.n; j++)
            count[b.indices[j]]++;
          total += b.n;
          got++;
          sl_batch_release(ld, &b, NULL);
        }
        assert_int_equal(got, nb);
        sl_loader_close(ld);
      }
      uint64_t covered = 0, repeats = 0;
      for (int i = 0; i < 101; i++) {
        covered += count[i] > 0;
        repeats += count[i] > 1 ? count[i] - 1 : 0;
      }
      if (drop) {
        assert_int_equal(nb, 101 / 12);
        assert_int_equal(repeats, 0);
      } else {
        assert_int_equal(nb, (101 + 11) / 12);
        assert_int_equal(covered, 101);
        assert_int_equal(repeats, total - 101);
      }
    }
}

/* Evaluation sees every sample exactly once over 1-3 ranks: eval ignores
 * loader.drop_last = true, every rank gets the same number of batches, each
 * batch's samples [0, valid) are real and the rest padding; the union of
 * the valid samples over the ranks is each index once. Without drop_last,
 * training marks its padding the same way. */
static void test_eval_every_sample_once(void **state) {
  const struct {
    uint64_t count;
    const char *batch;
  } sets[] = {{10, "4"}, {101, "4"}, {24, "4"}, {1, "2"}};
  const char *modes[] = {"eval", "train"};
  opts o = defaults();
  for (int mi = 0; mi < 2; mi++)
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++)
      for (int world = 1; world <= 3; world++) {
        o.mode = modes[mi];
        o.drop_last = mi == 0 ? "true" : "false";
        o.count = sets[si].count;
        o.batch = sets[si].batch;
        uint64_t bs = strtoull(o.batch, NULL, 10), n = o.count;
        char wtext[4];
        snprintf(wtext, sizeof wtext, "%d", world);
        o.world = wtext;
        uint32_t seen[101] = {0};
        uint64_t valid_total = 0;
        uint64_t want_nb = (n + world * bs - 1) / (world * bs);
        for (int r = 0; r < world; r++) {
          char rank[4];
          snprintf(rank, sizeof rank, "%d", r);
          o.rank = rank;
          sl_loader *ld = open_loader(&o);
          assert_int_equal(sl_loader_batches_per_epoch(ld), want_nb);
          assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
          sl_batch b;
          uint64_t got = 0;
          sl_status st;
          while ((st = sl_loader_next(ld, &b)) == SL_OK) {
            assert_int_equal(b.n, bs);
            assert_true(b.valid <= b.n);
            for (uint32_t j = 0; j < b.valid; j++)
              seen[b.indices[j]]++;
            valid_total += b.valid;
            got++;
            assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
          }
          assert_int_equal(st, SL_END);
          assert_int_equal(got, want_nb);
          sl_loader_close(ld);
        }
        assert_int_equal(valid_total, n);
        for (uint64_t i = 0; i < n; i++)
          if (seen[i] != 1)
            fail_msg("%s, %llu samples, batch %llu, %d ranks: sample %llu "
                     "seen %u times",
                     o.mode, (unsigned long long)n, (unsigned long long)bs,
                     world, (unsigned long long)i, seen[i]);
      }
}

/* A batch at each resolution of the schedule has its shape and bytes, in
 * every dtype. */
static void test_shapes(void **state) {
  const char *dtypes[] = {"u8", "fp16", "bf16", "fp32"};
  const size_t elem[] = {1, 2, 2, 4};
  const int res[] = {8, 12, 12, 16, 16};
  for (int d = 0; d < 4; d++) {
    opts o = defaults();
    o.dtype = dtypes[d];
    sl_loader *ld = open_loader(&o);
    for (uint64_t e = 0; e < 5; e++) {
      assert_int_equal(sl_loader_epoch_resolution(ld, e), res[e]);
      assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
      sl_batch b;
      assert_int_equal(sl_loader_next(ld, &b), SL_OK);
      assert_int_equal(b.height, res[e]);
      assert_int_equal(b.width, res[e]);
      assert_int_equal(b.channels, 3);
      assert_int_equal(b.n, 8);
      assert_int_equal(b.dtype, d);
      assert_int_equal(b.layout, SL_LAYOUT_NCHW);
      assert_int_equal(b.on_device, 0);
      assert_null(b.ready);
      assert_int_equal(b.bytes, 8 * 3 * elem[d] * (size_t)res[e] * res[e]);
      assert_true(fake_batch_ok(&b, 5, (sl_dtype)d));
      sl_batch_release(ld, &b, NULL);
    }
    sl_loader_close(ld);
  }
}

static uint8_t g_bad[203];

/* on_error = fail: next returns the sample's error, naming it, and keeps
 * returning it; the next epoch starts clean. */
static void test_on_error_fail(void **state) {
  opts o = defaults();
  o.order = "sequential";
  memset(g_bad, 0, sizeof g_bad);
  g_bad[42] = 1; /* batch 5 */
  o.bad = g_bad;
  sl_loader *ld = open_loader(&o);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  for (int k = 0; k < 5; k++) {
    assert_int_equal(sl_loader_next(ld, &b), SL_OK);
    sl_batch_release(ld, &b, NULL);
  }
  assert_int_equal(sl_loader_next(ld, &b), SL_EDECODE);
  assert_non_null(strstr(sl_loader_errmsg(ld), "sample 42"));
  assert_int_equal(sl_loader_next(ld, &b), SL_EDECODE);
  sl_loader_stats s;
  assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
  assert_true(s.failed >= 1);
  assert_true(s.nbad >= 1);
  /* The next epoch starts clean (sample 42 fails again in it). */
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(b.epoch, 1);
  sl_batch_release(ld, &b, NULL);
  sl_loader_close(ld);
}

/* on_error = skip: the epoch completes, the bad sample is replaced the same
 * way for any worker count, counted and listed. */
static void test_on_error_skip(void **state) {
  opts o = defaults();
  o.on_error = "skip";
  memset(g_bad, 0, sizeof g_bad);
  g_bad[3] = g_bad[100] = g_bad[150] = 1;
  o.bad = g_bad;
  uint64_t h[2];
  for (int i = 0; i < 2; i++) {
    o.workers = i ? 4 : 1;
    sl_loader *ld = open_loader(&o);
    h[i] = run_epochs(ld, &o, 0, 2);
    sl_loader_stats s;
    assert_int_equal(sl_loader_stats_get(ld, &s), SL_OK);
    assert_true(s.skipped >= 6); /* 3 per epoch (padding may add repeats) */
    int seen100 = 0;
    for (uint32_t j = 0; j < s.nbad; j++)
      seen100 |= s.bad[j] == 100;
    assert_true(seen100);
    sl_loader_close(ld);
  }
  assert_int_equal(h[0], h[1]);
}

/* on_error = skip with nothing loadable: the epoch fails with SL_ESAMPLE and
 * a readable message that quotes a replacement's own error once. */
static void test_on_error_skip_all_bad(void **state) {
  opts o = defaults();
  o.on_error = "skip";
  memset(g_bad, 1, sizeof g_bad);
  o.bad = g_bad;
  sl_loader *ld = open_loader(&o);
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  assert_int_equal(sl_loader_next(ld, &b), SL_ESAMPLE);
  const char *msg = sl_loader_errmsg(ld);
  const char *first = strstr(msg, "replacements failed");
  assert_non_null(first);
  assert_null(strstr(first + 1, "replacements failed"));
  assert_non_null(strstr(msg, "last: fake.lmdb: sample "));
  assert_non_null(strstr(msg, ": corrupt JPEG"));
  sl_loader_close(ld);
}

/* A slow consumer holds batches while workers run ahead: a held batch never
 * changes, and a released slot that we poison is fully rewritten before it
 * is handed out again. Holding every slot makes next refuse (no deadlock);
 * a double release is refused. */
static void test_slot_reuse(void **state) {
  opts o = defaults();
  o.workers = 4;
  o.prefetch = "3";
  o.staging = "2";
  sl_loader *ld = open_loader(&o);
  size_t cap = 0;
  for (uint64_t e = 0; e < 2; e++) {
    assert_int_equal(sl_loader_start_epoch(ld, e), SL_OK);
    sl_batch held[2];
    uint64_t copies_h[2];
    int nheld = 0;
    sl_batch b;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      assert_true(fake_batch_ok(&b, 5, SL_DTYPE_U8));
      held[nheld] = b;
      copies_h[nheld] = hash_batch(1, &b);
      nheld++;
      if (nheld < 2)
        continue;
      usleep(2000); /* workers and mover run ahead meanwhile */
      for (int i = 0; i < 2; i++) {
        assert_int_equal(hash_batch(1, &held[i]), copies_h[i]);
        memset(held[i].data, 0xA5, held[i].bytes); /* poison */
        if (held[i].bytes > cap)
          cap = held[i].bytes;
        assert_int_equal(sl_batch_release(ld, &held[i], NULL), SL_OK);
      }
      assert_int_equal(sl_batch_release(ld, &held[0], NULL), SL_EINVAL);
      nheld = 0;
    }
    assert_int_equal(st, SL_END);
    for (int i = 0; i < nheld; i++)
      sl_batch_release(ld, &held[i], NULL);
  }
  /* Hold all three slots: the fourth next says so instead of hanging. */
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch hb[3], b;
  for (int i = 0; i < 3; i++)
    assert_int_equal(sl_loader_next(ld, &hb[i]), SL_OK);
  assert_int_equal(sl_loader_next(ld, &b), SL_ESTATE);
  assert_non_null(strstr(sl_loader_errmsg(ld), "release"));
  assert_int_equal(sl_batch_release(ld, &hb[1], NULL), SL_OK);
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_int_equal(b.index, 3);
  assert_true(fake_batch_ok(&b, 5, SL_DTYPE_U8));
  /* Batches held across a restart stay valid and releasable. */
  assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
  assert_true(fake_batch_ok(&hb[0], 5, SL_DTYPE_U8));
  sl_batch_release(ld, &hb[0], NULL);
  sl_batch_release(ld, &hb[2], NULL);
  sl_batch_release(ld, &b, NULL);
  assert_int_equal(run_epochs(ld, &o, 1, 2) != 0, 1);
  sl_loader_close(ld);
}

/* Closing mid-epoch, restarting an epoch early and 100 open/close cycles
 * leave no thread or fd behind; anonymous RSS does not grow over 5 epochs. */
static void test_clean(void **state) {
  int tasks0 = sl_test_count_dir("/proc/self/task"),
      fds0 = sl_test_count_dir("/proc/self/fd");
  opts o = defaults();
  o.workers = 3;
  for (int i = 0; i < 100; i++) {
    sl_loader *ld = open_loader(&o);
    if (i % 3 == 1) { /* break out of the loop mid-epoch */
      assert_int_equal(sl_loader_start_epoch(ld, (uint64_t)i), SL_OK);
      sl_batch b;
      assert_int_equal(sl_loader_next(ld, &b), SL_OK);
      if (i % 2)
        sl_batch_release(ld, &b, NULL);
    } else if (i % 3 == 2) { /* restart early, twice */
      assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
      sl_batch b;
      assert_int_equal(sl_loader_next(ld, &b), SL_OK);
      sl_batch_release(ld, &b, NULL);
      assert_int_equal(sl_loader_start_epoch(ld, 1), SL_OK);
      assert_int_equal(sl_loader_start_epoch(ld, 2), SL_OK);
      assert_int_equal(sl_loader_next(ld, &b), SL_OK);
      assert_int_equal(b.epoch, 2);
      assert_int_equal(b.index, 0);
    }
    sl_loader_close(ld);
  }
  assert_int_equal(sl_test_tasks_settled(tasks0), tasks0);
  assert_int_equal(sl_test_count_dir("/proc/self/fd"), fds0);

  /* Memory: everything is allocated at open. Anonymous memory: VmRSS also
   * counts file-backed pages (code faulted in late, or reclaimed and faulted
   * back on a loaded machine), which the loader does not allocate. */
  o.schedule = "constant";
  o.count = 2000;
  o.batch = "16";
  sl_loader *ld = open_loader(&o);
  run_epochs(ld, &o, 0, 1);
  long r1 = sl_test_status_kib("RssAnon");
  run_epochs(ld, &o, 1, 5);
  long r5 = sl_test_status_kib("RssAnon");
  sl_loader_close(ld);
  if (sl_test_rss_is_meaningful())
    assert_true(r1 > 0 && r5 - r1 < 1024); /* KiB; buffers alone are ~3 MiB */
}

/* A batch released into another loader is refused as not from it, even
 * when that loader holds a batch in the same slot and generation; both
 * batches are then released where they came from. */
static void test_release_into_other_loader(void **state) {
  opts o = defaults();
  sl_loader *a = open_loader(&o), *b = open_loader(&o);
  assert_int_equal(sl_loader_start_epoch(a, 0), SL_OK);
  assert_int_equal(sl_loader_start_epoch(b, 0), SL_OK);
  sl_batch ba, bb;
  assert_int_equal(sl_loader_next(a, &ba), SL_OK);
  assert_int_equal(sl_loader_next(b, &bb), SL_OK);
  assert_int_equal(ba.slot, bb.slot);
  assert_int_equal(sl_batch_release(b, &ba, NULL), SL_EINVAL);
  if (!strstr(sl_loader_errmsg(b), "not from this loader"))
    fail_msg("%s", sl_loader_errmsg(b));
  assert_int_equal(sl_batch_release(b, &bb, NULL), SL_OK);
  assert_int_equal(sl_batch_release(a, &ba, NULL), SL_OK);
  /* Released twice: said so. */
  assert_int_equal(sl_batch_release(a, &ba, NULL), SL_EINVAL);
  assert_non_null(strstr(sl_loader_errmsg(a), "already released"));
  sl_loader_close(a);
  sl_loader_close(b);
}

/* Bad arguments and states get statuses, not crashes. */
static void test_misuse(void **state) {
  sl_batch b;
  assert_int_equal(sl_loader_next(NULL, &b), SL_EINVAL);
  sl_loader_close(NULL);
  assert_int_equal(sl_loader_open(NULL, NULL), SL_EINVAL);
  opts o = defaults();
  sl_loader *ld = open_loader(&o);
  assert_int_equal(sl_loader_next(ld, &b), SL_ESTATE); /* no epoch yet */
  memset(&b, 0, sizeof b);
  b.slot = 99;
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_EINVAL);
  sl_loader_close(ld);
  /* drop_last with too few samples for a whole batch: ECONFIG at open. */
  sl_config *cfg = make_cfg((const char *[]){"loader.batch_size", "300",
                                             "loader.drop_last", "true", NULL});
  fake_ctx fc = {.seed = 1, .dtype = SL_DTYPE_FP16, .channels = 3};
  sl_sample_src src = fake_src(203, &fc);
  assert_int_equal(sl_loader_open_with(&ld, cfg, &src, NULL), SL_ECONFIG);
  /* The failed open's handle holds the message; the config is untouched. */
  assert_non_null(ld);
  assert_non_null(strstr(sl_loader_errmsg(ld), "drop_last"));
  assert_string_equal(sl_config_errmsg(cfg), "");
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_ESTATE);
  assert_int_equal(sl_loader_next(ld, &b), SL_ESTATE);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_ESTATE);
  sl_loader_stats stats;
  assert_int_equal(sl_loader_stats_get(ld, &stats), SL_ESTATE);
  size_t len = 0;
  assert_int_equal(sl_loader_save_state(ld, NULL, &len), SL_ESTATE);
  assert_int_equal(sl_loader_restore_state(ld, "x", 1), SL_ESTATE);
  assert_non_null(strstr(sl_loader_errmsg(ld), "did not open"));
  assert_non_null(strstr(sl_loader_errmsg(ld), "drop_last"));
  assert_int_equal(sl_loader_batches_per_epoch(ld), 0);
  sl_loader_close(ld);
  /* An invalid config. */
  assert_int_equal(sl_config_set(cfg, "loader.world_size", "2"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "loader.rank", "2"), SL_OK);
  src = fake_src(203, &fc);
  assert_int_equal(sl_loader_open_with(&ld, cfg, &src, NULL), SL_ECONFIG);
  assert_non_null(strstr(sl_loader_errmsg(ld), "loader.rank"));
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

/* The host backend moves a batch by exchanging the full staging buffer with
 * the slot's buffer: no bytes are copied, every buffer stays owned once, and
 * a copy it cannot do is an error. */
static void test_host_backend_trades_buffers(void **state) {
  (void)state;
  sl_ring_backend *b;
  sl_err err;
  assert_int_equal(sl_ring_backend_host_create(&b, &err), SL_OK);
  assert_int_equal(b->ops->alloc(b, 2, 4096, 3, 4096, &err), SL_OK);
  void *st0 = b->ops->staging(b, 0), *st1 = b->ops->staging(b, 1);
  void *sl2 = b->ops->slot(b, 2);
  memset(st1, 0x5A, 4096);
  sl_ring_copy c = {.src = st1,
                    .src_index = 1,
                    .src_bytes = 4096,
                    .dst_bytes = 4096,
                    .src_dtype = SL_DTYPE_FP16,
                    .dst_dtype = SL_DTYPE_FP16};
  assert_int_equal(b->ops->copy_to_slot(b, 2, &c, &err), SL_OK);
  assert_ptr_equal(b->ops->slot(b, 2), st1); /* the batch, not a copy */
  assert_ptr_equal(b->ops->staging(b, 1), sl2);
  assert_ptr_equal(b->ops->staging(b, 0), st0);
  assert_int_equal(((uint8_t *)b->ops->slot(b, 2))[4095], 0x5A);
  c.src = st1; /* no longer staging buffer 1 */
  assert_int_equal(b->ops->copy_to_slot(b, 0, &c, &err), SL_EINVAL);
  c.src = b->ops->staging(b, 1);
  c.dst_dtype = SL_DTYPE_FP32;
  assert_int_equal(b->ops->copy_to_slot(b, 0, &c, &err), SL_EUNSUPPORTED);
  b->ops->destroy(b); /* frees each buffer once (ASan, valgrind) */
}

/* A backend failure that coincides with an abort (start_epoch at that
 * moment) still stops the ring, after the backend has drained: otherwise
 * the next epoch would hand out staging buffers an unfinished copy still
 * reads. The wrapped host backend fails its first copy once the abort has
 * begun (it waits for that inside the copy, through the ring's own staging
 * wait, which an abort ends). */
typedef struct failing_backend {
  sl_ring_backend base; /* first */
  sl_ring_backend *host;
  sl_ring_backend_ops ops;
  sl_ring *ring;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int entered, drained, waited_for_abort;
} failing_backend;

static failing_backend *fb_of(sl_ring_backend *b) {
  return (failing_backend *)b;
}
static sl_status fb_alloc(sl_ring_backend *b, int ns, size_t sb, int nl,
                          size_t lb, sl_err *err) {
  return fb_of(b)->host->ops->alloc(fb_of(b)->host, ns, sb, nl, lb, err);
}
static void fb_destroy(sl_ring_backend *b) {
  fb_of(b)->host->ops->destroy(fb_of(b)->host);
}
static void *fb_staging(sl_ring_backend *b, int i) {
  return fb_of(b)->host->ops->staging(fb_of(b)->host, i);
}
static void *fb_slot(sl_ring_backend *b, int s) {
  return fb_of(b)->host->ops->slot(fb_of(b)->host, s);
}
static sl_status fb_copy(sl_ring_backend *b, int s, const sl_ring_copy *c,
                         sl_err *err) {
  failing_backend *f = fb_of(b);
  pthread_mutex_lock(&f->mu);
  f->entered = 1;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  sl_ring_staging never;
  /* Blocks until the abort: batch 1000 never gets a staging buffer. (No
   * cmocka assertion here: this is the mover thread.) */
  f->waited_for_abort =
      sl_ring_staging_acquire(f->ring, 1000, &never) == SL_ESTATE;
  return sl_err_set(err, SL_ECUDA, "injected copy failure (slot %d)", s);
}
static sl_status fb_ok(sl_ring_backend *b, int s, sl_err *err) {
  return SL_OK;
}
static void *fb_ready_event(sl_ring_backend *b, int s) {
  return NULL;
}
static sl_status fb_consumed(sl_ring_backend *b, int s, void *stream,
                             sl_err *err) {
  return SL_OK;
}
static void fb_drain(sl_ring_backend *b) {
  fb_of(b)->drained++; /* the mover thread; read after the abort returns */
}

static void test_backend_failure_beats_abort(void **state) {
  (void)state;
  failing_backend f;
  memset(&f, 0, sizeof f);
  sl_err err;
  assert_int_equal(sl_ring_backend_host_create(&f.host, &err), SL_OK);
  f.ops = *f.host->ops;
  f.ops.alloc = fb_alloc;
  f.ops.destroy = fb_destroy;
  f.ops.staging = fb_staging;
  f.ops.slot = fb_slot;
  f.ops.copy_to_slot = fb_copy;
  f.ops.record_ready = fb_ok;
  f.ops.wait_ready = fb_ok;
  f.ops.ready_event = fb_ready_event;
  f.ops.record_consumed = fb_consumed;
  f.ops.wait_consumed = fb_ok;
  f.ops.drain = fb_drain;
  f.base.ops = &f.ops;
  assert_int_equal(pthread_mutex_init(&f.mu, NULL), 0);
  assert_int_equal(pthread_cond_init(&f.cv, NULL), 0);
  sl_ring_config rc = {.nstaging = 1,
                       .nslots = 2,
                       .staging_bytes = 64,
                       .slot_bytes = 64,
                       .batch_size = 2};
  sl_ring *r;
  assert_int_equal(sl_ring_create(&r, &rc, &f.base, &err), SL_OK);
  f.ring = r;
  sl_ring_epoch ep;
  memset(&ep, 0, sizeof ep);
  ep.nbatches = 2;
  ep.copy.n = 2;
  ep.copy.src_dtype = ep.copy.dst_dtype = SL_DTYPE_U8;
  ep.src_sample_bytes = ep.dst_sample_bytes = 32;
  sl_ring_reset(r, &ep);
  sl_ring_staging stg;
  assert_int_equal(sl_ring_staging_acquire(r, 0, &stg), SL_OK);
  sl_ring_staging_done(r, 0, 0, SL_OK, NULL);
  sl_ring_staging_done(r, 0, 1, SL_OK, NULL); /* the mover takes batch 0 */
  pthread_mutex_lock(&f.mu);
  while (!f.entered)
    pthread_cond_wait(&f.cv, &f.mu);
  pthread_mutex_unlock(&f.mu);
  sl_ring_abort(r); /* returns once the mover is idle again */
  assert_int_equal(f.drained, 1);
  assert_true(f.waited_for_abort);
  sl_ring_batch b;
  sl_err e2;
  assert_int_equal(sl_ring_next(r, &b, NULL, &e2), SL_ECUDA);
  assert_non_null(strstr(e2.msg, "injected copy failure"));
  sl_ring_reset(r, &ep); /* a new epoch: the failure still stands */
  assert_int_equal(sl_ring_next(r, &b, NULL, &e2), SL_ECUDA);
  sl_ring_destroy(r);
  pthread_cond_destroy(&f.cv);
  pthread_mutex_destroy(&f.mu);
}

/* The mover's waits on the consumer that happen inside the backend (the
 * CUDA copy stream waits for `consumed` on the device) count in the slot
 * wait: a backend that reports 3 ms a move adds 3 ms a batch. */
static uint64_t slow_consumer_ns(sl_ring_backend *b, int s) {
  (void)b;
  (void)s;
  return 3000000;
}

static void test_device_wait_counts(void **state) {
  (void)state;
  sl_err err;
  sl_ring_backend *host;
  assert_int_equal(sl_ring_backend_host_create(&host, &err), SL_OK);
  sl_ring_backend_ops ops = *host->ops;
  ops.consumer_wait_ns = slow_consumer_ns;
  host->ops = &ops; /* the ring only reaches the backend through ops */
  sl_ring_config rc = {.nstaging = 1,
                       .nslots = 2,
                       .staging_bytes = 64,
                       .slot_bytes = 64,
                       .batch_size = 2};
  sl_ring *r;
  assert_int_equal(sl_ring_create(&r, &rc, host, &err), SL_OK);
  sl_ring_epoch ep;
  memset(&ep, 0, sizeof ep);
  ep.nbatches = 4;
  ep.copy.n = 2;
  ep.copy.src_dtype = ep.copy.dst_dtype = SL_DTYPE_U8;
  ep.src_sample_bytes = ep.dst_sample_bytes = 32;
  sl_ring_reset(r, &ep);
  for (uint64_t k = 0; k < ep.nbatches; k++) {
    sl_ring_staging stg;
    assert_int_equal(sl_ring_staging_acquire(r, k, &stg), SL_OK);
    sl_ring_staging_done(r, k, 0, SL_OK, NULL);
    sl_ring_staging_done(r, k, 1, SL_OK, NULL);
    sl_ring_batch b;
    assert_int_equal(sl_ring_next(r, &b, NULL, &err), SL_OK);
    assert_int_equal(
        sl_ring_release(r, b.slot, b.generation, b.labels, NULL, &err), SL_OK);
  }
  uint64_t w = sl_ring_slot_wait_ns(r);
  if (w < 4 * 3000000ull)
    fail_msg("slot wait %llu ns: the backend's 4 × 3 ms are not counted",
             (unsigned long long)w);
  sl_ring_destroy(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_workers_deterministic),
      cmocka_unit_test(test_resume),
      cmocka_unit_test(test_unget),
      cmocka_unit_test(test_resume_refused),
      cmocka_unit_test(test_state_fingerprints_pinned),
      cmocka_unit_test(test_sharding_api),
      cmocka_unit_test(test_eval_every_sample_once),
      cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_on_error_fail),
      cmocka_unit_test(test_on_error_skip),
      cmocka_unit_test(test_on_error_skip_all_bad),
      cmocka_unit_test(test_slot_reuse),
      cmocka_unit_test(test_clean),
      cmocka_unit_test(test_release_into_other_loader),
      cmocka_unit_test(test_misuse),
      cmocka_unit_test(test_host_backend_trades_buffers),
      cmocka_unit_test(test_backend_failure_beats_abort),
      cmocka_unit_test(test_device_wait_counts),
      cmocka_unit_test(test_elastic_resume),
      cmocka_unit_test(test_elastic_resume_twice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
