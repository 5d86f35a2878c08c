/* The resume blob and the stats.
 *
 * State blob, SL_LOADER_STATE_BYTES (256) bytes, little-endian, version 5:
 *    0  magic "SLUICEST"
 *    8  u32 version (5)           12  u32 size (256)
 *   16  u64 epoch                 24  u64 next batch (handed out so far)
 *   32  u64 seed                  40  u64 sample count
 *   48  u64 batch size            56  u32 rank   60  u32 world size
 *   64  u32 world size of the epoch's first earlier deal (0: the epoch is
 *       dealt whole)              68  u32 batches each of its ranks read
 *   72  u8 order  73 u8 drop_last  74 u8 mode (0 train, 1 eval)
 *   75  u8 dtype  76 u8 layout     77 u8 channels
 *   78  u16 earlier deals (elastic resumes of the epoch: 0..8)
 *   80  u16 x 8: a tag (16-bit hash) of each augmentation group, k_groups
 *   96  u64 dataset fingerprint (sl_sample_src.fingerprint)
 *  104  u64 schedule fingerprint 112  u64 augmentation fingerprint
 *  120  u64 zero
 *  128  u32 world, u32 batches read of earlier deals 2..8 (7 x 8 bytes)
 *  184  zero                     248  u64 FNV-1a 64 of bytes 0..247
 * The settings are stored to refuse a resume that would not reproduce the
 * run; the order itself is recomputed from them. The augmentation
 * fingerprint decides; the group tags say which keys to name. Rank and
 * world size are not checked: any rank's state restores on any world size
 * (sampler.h, elastic resume). Version 4 (128 bytes: one earlier deal at
 * most, 78 zero, the checksum of bytes 0..119 at 120) is read. Version 3
 * (u64 rank at 56, u64 world size at 64, no resumed-from run) is read.
 * Version 2 (the same, without tags: order .. layout as u32 at 72, 76, 80,
 * 84, 88 and channels at 92) is read; version 1 (96 bytes) had no
 * fingerprints and is refused. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "loader/loader_impl.h"

#include "common/clock.h"

#define STATE_VERSION 5u
#define SUM_AT 248     /* version 5 */
#define SUM_AT_V4 120  /* versions 2 to 4, of 128 bytes */
#define OLD_BYTES 128u /* versions 2 to 4 */
#define DEALS_AT 128   /* earlier deals 2.. */
static const char k_magic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'S', 'T'};

_Static_assert(SL_LOADER_STATE_BYTES == 256 && SL_SAMPLER_DEALS_MAX == 8,
               "state blob layout");
_Static_assert(SL_STATS_BAD_KEEP == SL_POOL_BAD_KEEP, "bad sample list");

/* SL_LOADER_STATS_FIELDS lists sl_loader_stats's fields, in order, with
 * their types: a struct built from the list must lay out as the public one
 * (the same offsets and sizes, each field of the listed type), the whole
 * struct (its reserved word became left_out). */
#define STAT_CTYPE_U64 uint64_t
#define STAT_CTYPE_U32 uint32_t
#define STAT_CTYPE_F64 double
#define STAT_CTYPE_STR const char *
#define STAT_MEMBER(type, name, n, kind) STAT_CTYPE_##type name[n];
struct stats_from_list {
  SL_LOADER_STATS_FIELDS(STAT_MEMBER)
};
#define STAT_SAME(type, name, n, kind)                                         \
  _Static_assert(                                                              \
      offsetof(sl_loader_stats, name) ==                                       \
              offsetof(struct stats_from_list, name) &&                        \
          sizeof(((sl_loader_stats *)0)->name) ==                              \
              sizeof(((struct stats_from_list *)0)->name) &&                   \
          _Generic(((sl_loader_stats *)0)->name, STAT_CTYPE_##type : 1,        \
                   STAT_CTYPE_##type * : 1, default : 0),                      \
      "SL_LOADER_STATS_FIELDS and sl_loader_stats differ at " #name);
SL_LOADER_STATS_FIELDS(STAT_SAME)
_Static_assert(sizeof(struct stats_from_list) == sizeof(sl_loader_stats),
               "SL_LOADER_STATS_FIELDS misses a field of sl_loader_stats");

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint16_t get16(const uint8_t *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* The augmentation's groups (fingerprint.h), as a refused resume names
 * them. */
static const char *const k_groups[SL_AUGMENT_GROUPS] = {
    [SL_AUGMENT_GROUP_CROP] =
        "augment.crop or a key it uses (scale, ratio, center_ratio, "
        "iou_crop_rule, letterbox_fill, box_min_area), or the boxes a batch "
        "keeps (loader.max_boxes)",
    [SL_AUGMENT_GROUP_FLIP] = "augment.flip",
    [SL_AUGMENT_GROUP_NORM] = "augment.mean or augment.std",
    [SL_AUGMENT_GROUP_FILTER] = "augment.filter or augment.jpeg_planes",
    [SL_AUGMENT_GROUP_AUTO] = "augment.auto or an augment.auto_* key",
    [SL_AUGMENT_GROUP_COLOR] =
        "augment.color_jitter, color_jitter_p, grayscale, blur, blur_kernel "
        "or blur_sigma",
    [SL_AUGMENT_GROUP_ERASING] =
        "augment.erasing, erasing_scale, erasing_ratio or erasing_value",
    [SL_AUGMENT_GROUP_MIX] =
        "augment.mixup, cutmix, mix_prob, mix_switch_prob, label_smoothing "
        "or num_classes",
};
_Static_assert(SL_AUGMENT_GROUP_MIX + 1 == SL_AUGMENT_GROUPS,
               "one name a group");

sl_status sl_loader_save_state(sl_loader *ld, void *buf, size_t *len) {
  if (!ld || !len)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return sl_loader_not_open(ld);
  sl_err *err = &ld->err;
  sl_err_clear(err);
  if (!buf || *len < SL_LOADER_STATE_BYTES) {
    *len = SL_LOADER_STATE_BYTES;
    return sl_err_set(err, SL_ETOOBIG, "the state needs %d bytes",
                      SL_LOADER_STATE_BYTES);
  }
  if (!ld->started)
    return sl_err_set(err, SL_ESTATE, "no epoch started: nothing to save");
  const sl_sampler_config *c = &ld->sampler_cfg;
  bool wide = c->rank > UINT32_MAX || c->world_size > UINT32_MAX;
  for (uint32_t l = 0; l < ld->npast; l++)
    wide = wide || ld->past[l].world > UINT32_MAX ||
           ld->past[l].consumed > UINT32_MAX;
  if (wide)
    return sl_err_set(err, SL_ETOOBIG,
                      "the state holds ranks, world sizes and batches as "
                      "32-bit numbers: rank %llu of %llu (or an earlier "
                      "deal's) is beyond",
                      (unsigned long long)c->rank,
                      (unsigned long long)c->world_size);
  uint8_t *p = buf;
  memset(p, 0, SL_LOADER_STATE_BYTES);
  memcpy(p, k_magic, 8);
  put32(p + 8, STATE_VERSION);
  put32(p + 12, SL_LOADER_STATE_BYTES);
  put64(p + 16, ld->epoch);
  put64(p + 24, ld->delivered);
  put64(p + 32, c->seed);
  put64(p + 40, c->count);
  put64(p + 48, c->batch_size);
  put32(p + 56, (uint32_t)c->rank);
  put32(p + 60, (uint32_t)c->world_size);
  for (uint32_t l = 0; l < ld->npast; l++) {
    uint8_t *at = l == 0 ? p + 64 : p + DEALS_AT + 8 * (l - 1);
    put32(at, (uint32_t)ld->past[l].world);
    put32(at + 4, (uint32_t)ld->past[l].consumed);
  }
  put16(p + 78, (uint16_t)ld->npast);
  p[72] = (uint8_t)c->order;
  p[73] = (uint8_t)c->drop_last;
  p[74] = (uint8_t)ld->eval;
  p[75] = (uint8_t)ld->dtype;
  p[76] = (uint8_t)ld->layout;
  p[77] = (uint8_t)ld->src.channels;
  for (int i = 0; i < SL_AUGMENT_GROUPS; i++)
    put16(p + 80 + 2 * i, ld->augment_tags[i]);
  put64(p + 96, ld->src.fingerprint);
  put64(p + 104, ld->schedule_fp);
  put64(p + 112, ld->augment_fp);
  put64(p + SUM_AT, fnv1a(p, SUM_AT));
  *len = SL_LOADER_STATE_BYTES;
  return SL_OK;
}

static sl_status differs(sl_err *err, const char *what, uint64_t saved,
                         uint64_t now) {
  return sl_err_set(err, SL_ESTATE,
                    "cannot resume: %s was %llu in the saved run, %llu now",
                    what, (unsigned long long)saved, (unsigned long long)now);
}

/* The refusal for another augmentation: the groups whose tags differ
 * (saved: the blob's tags, NULL for a version 2 blob, which has none). */
static sl_status augment_differs(sl_err *err, const uint8_t *saved,
                                 const uint16_t *now) {
  char names[1024] = "";
  size_t n = 0;
  for (int i = 0; saved && i < SL_AUGMENT_GROUPS; i++)
    if (get16(saved + 2 * i) != now[i] && n < sizeof names) {
      int w = snprintf(names + n, sizeof names - n, "%s%s", n ? "; " : "",
                       k_groups[i]);
      n += w > 0 ? (size_t)w : 0;
    }
  if (n > 0)
    return sl_err_set(err, SL_ESTATE,
                      "cannot resume: the augmentation differs from the "
                      "saved run's: %s",
                      names);
  /* A version 2 blob, or a change no tag caught (1 in 65536). */
  return sl_err_set(err, SL_ESTATE,
                    "cannot resume: the augmentation differs from the saved "
                    "run's (an augment.* key other than dtype and layout, or "
                    "loader.max_boxes; %s)",
                    saved ? "which one its tags do not tell"
                          : "a state saved by an older sluice does not say "
                            "which");
}

/* A blob's fields, whatever its version. */
typedef struct parsed {
  uint32_t version;
  uint64_t epoch, next, seed, count, batch_size, rank, world;
  sl_sampler_deal past[SL_SAMPLER_DEALS_MAX];
  uint32_t npast;
  uint64_t small[6];   /* order, drop_last, mode, dtype, layout, channels */
  const uint8_t *tags; /* NULL for version 2 */
  uint64_t dataset_fp, schedule_fp, augment_fp;
} parsed;

static sl_status parse(const void *buf, size_t len, parsed *out, sl_err *err) {
  memset(out, 0, sizeof *out);
  const uint8_t *p = buf;
  if (!p || len < 16 || memcmp(p, k_magic, 8) != 0)
    return sl_err_set(err, SL_EINVAL, "not a sluice loader state");
  uint32_t version = get32(p + 8);
  if (version == 1)
    return sl_err_set(err, SL_EINVAL,
                      "loader state version 1, from an older sluice that did "
                      "not record which dataset and settings it was saved "
                      "with; this library reads versions 2 to %u: start the "
                      "saved epoch again instead (sl_loader_start_epoch)",
                      STATE_VERSION);
  if (version < 2 || version > STATE_VERSION)
    return sl_err_set(err, SL_EINVAL,
                      "loader state version %u; this library reads 2 to %u",
                      version, STATE_VERSION);
  uint32_t size = version == 5 ? SL_LOADER_STATE_BYTES : OLD_BYTES;
  size_t sum_at = version == 5 ? SUM_AT : SUM_AT_V4;
  if (len < size || get32(p + 12) != size)
    return sl_err_set(err, SL_EINVAL, "loader state truncated (%zu bytes)",
                      len);
  if (get64(p + sum_at) != fnv1a(p, sum_at))
    return sl_err_set(err, SL_EINVAL,
                      "loader state damaged (checksum "
                      "mismatch)");
  out->version = version;
  out->epoch = get64(p + 16);
  out->next = get64(p + 24);
  out->seed = get64(p + 32);
  out->count = get64(p + 40);
  out->batch_size = get64(p + 48);
  if (version >= 4) {
    out->rank = get32(p + 56);
    out->world = get32(p + 60);
    out->npast = version == 5 ? get16(p + 78) : get32(p + 64) != 0;
    if (out->npast > SL_SAMPLER_DEALS_MAX)
      return sl_err_set(err, SL_EINVAL,
                        "loader state damaged (%u earlier deals of its "
                        "epoch; at most %d)",
                        out->npast, SL_SAMPLER_DEALS_MAX);
    for (uint32_t l = 0; l < out->npast; l++) {
      const uint8_t *at = l == 0 ? p + 64 : p + DEALS_AT + 8 * (l - 1);
      out->past[l] = (sl_sampler_deal){get32(at), get32(at + 4)};
    }
  } else {
    out->rank = get64(p + 56);
    out->world = get64(p + 64);
  }
  for (int i = 0; i < 6; i++)
    out->small[i] = version == 2 ? get32(p + 72 + 4 * i) : p[72 + i];
  out->tags = version == 2 ? NULL : p + 80;
  out->dataset_fp = get64(p + 96);
  out->schedule_fp = get64(p + 104);
  out->augment_fp = get64(p + 112);
  return SL_OK;
}

/* Where the saved epoch stands (sl_sampler_progress) under the saved
 * world size; c: the loader's settings or the blob's. */
static sl_status saved_progress(const parsed *b, const sl_sampler_config *c,
                                sl_sampler_progress *pr, sl_err *err) {
  sl_sampler_config sc = *c;
  sc.rank = 0;
  sc.world_size = b->world;
  sl_status st =
      sl_sampler_progress_of(&sc, b->past, b->npast, b->next, pr, err);
  if (st != SL_OK)
    sl_err_prefix(err, "loader state: ");
  return st;
}

sl_status sl_loader_restore_state(sl_loader *ld, const void *buf, size_t len) {
  if (!ld)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return sl_loader_not_open(ld);
  sl_err_clear(&ld->err);
  parsed b;
  sl_status st = parse(buf, len, &b, &ld->err);
  if (st != SL_OK)
    return st;
  const sl_sampler_config *c = &ld->sampler_cfg;
  struct {
    const char *what;
    uint64_t saved, now;
  } checks[] = {
      /* First: eval decides the order and drop_last too. */
      {"loader.mode (1 = eval)", b.small[2], ld->eval},
      {"loader.seed", b.seed, c->seed},
      {"the dataset's sample count", b.count, c->count},
      {"loader.batch_size", b.batch_size, c->batch_size},
      {"loader.order", b.small[0], (uint64_t)c->order},
      {"loader.drop_last", b.small[1], c->drop_last},
      {"augment.dtype (0 u8, 1 fp16, 2 bf16, 3 fp32)", b.small[3],
       (uint64_t)ld->dtype},
      {"augment.layout (0 nchw, 1 nhwc)", b.small[4], (uint64_t)ld->layout},
      {"the dataset's channels", b.small[5], (uint64_t)ld->src.channels},
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (checks[i].saved != checks[i].now)
      return differs(&ld->err, checks[i].what, checks[i].saved, checks[i].now);
  /* Hashes: only that they differ can be said, and of what. */
  const struct {
    const char *what;
    uint64_t saved, now;
  } hashes[] = {
      {"the dataset differs from the saved run's: another file, or the same "
       "number of samples with other contents or in another order (a hash "
       "of its index, class names and targets does not match)",
       b.dataset_fp, ld->src.fingerprint},
      {"the resolution schedule differs from the saved run's (the "
       "resolution.* keys the schedule uses, or resolution.eval in eval "
       "mode)",
       b.schedule_fp, ld->schedule_fp},
  };
  for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++)
    if (hashes[i].saved != hashes[i].now)
      return sl_err_set(&ld->err, SL_ESTATE, "cannot resume: %s",
                        hashes[i].what);
  if (b.augment_fp != ld->augment_fp)
    return augment_differs(&ld->err, b.tags, ld->augment_tags);
  sl_sampler_progress pr;
  if ((st = saved_progress(&b, c, &pr, &ld->err)) != SL_OK)
    return st;
  /* Which deal the resumed epoch runs: the saved one on its own world
   * size; on another, the rest of the saved deal, one level deeper (the
   * same rest again when the saved deal had not begun). */
  uint64_t first = b.next;
  if (b.world != c->world_size) {
    if (b.next > 0) { /* saved at batch 0: that deal again, on this world */
      if (b.npast == SL_SAMPLER_DEALS_MAX)
        return sl_err_set(
            &ld->err, SL_ESTATE,
            "cannot resume on %llu ranks: epoch %llu was already resumed on "
            "another world size %d times (the most a state records); resume "
            "on %llu ranks, or start epoch %llu on any",
            (unsigned long long)c->world_size, (unsigned long long)b.epoch,
            SL_SAMPLER_DEALS_MAX, (unsigned long long)b.world,
            (unsigned long long)(b.epoch + 1));
      b.past[b.npast++] = (sl_sampler_deal){b.world, b.next};
    }
    first = 0;
  }
  memcpy(ld->past, b.past, sizeof ld->past);
  ld->npast = b.npast;
  st = sl_loader_start_at(ld, b.epoch, first);
  if (st == SL_OK && ld->epoch_nbatches == 0 && pr.left > 0)
    sl_logf(&ld->log, SL_LOG_WARN,
            "epoch %llu resumed on %llu ranks: loader.drop_last drops all "
            "%llu samples the saved run had left (fewer than %llu ranks x "
            "loader.batch_size %llu)",
            (unsigned long long)b.epoch, (unsigned long long)c->world_size,
            (unsigned long long)pr.left, (unsigned long long)c->world_size,
            (unsigned long long)c->batch_size);
  return st;
}

sl_status sl_loader_state_info_get(const void *blob, size_t len,
                                   sl_loader_state_info *out) {
  if (!out)
    return SL_EINVAL;
  memset(out, 0, sizeof *out);
  sl_err err;
  sl_err_clear(&err);
  parsed b;
  if (parse(blob, len, &b, &err) != SL_OK)
    return SL_EINVAL;
  sl_sampler_config c = {.count = b.count,
                         .batch_size = b.batch_size,
                         .rank = b.rank,
                         .world_size = b.world,
                         .order = (sl_order)b.small[0],
                         .seed = b.seed,
                         .drop_last = b.small[1] != 0,
                         .quasi_block = 1,
                         .quasi_window = 1};
  sl_sampler_progress pr;
  if (saved_progress(&b, &c, &pr, &err) != SL_OK)
    return SL_EINVAL;
  out->version = b.version;
  out->mode = (uint32_t)b.small[2];
  out->epoch = b.epoch;
  out->batches = b.next;
  out->samples_read = pr.read;
  out->samples_left = pr.left;
  out->sample_count = b.count;
  out->batch_size = b.batch_size;
  out->rank = b.rank;
  out->world_size = b.world;
  out->seed = b.seed;
  out->order = (uint32_t)b.small[0];
  out->drop_last = (uint32_t)b.small[1];
  out->dtype = (uint32_t)b.small[3];
  out->layout = (uint32_t)b.small[4];
  out->channels = (uint32_t)b.small[5];
  if (b.npast > 0) {
    out->resumed_from_world = (uint32_t)b.past[b.npast - 1].world;
    out->resumed_from_batches = b.past[b.npast - 1].consumed;
  }
  out->resumes = b.npast;
  out->dataset_fingerprint = b.dataset_fp;
  out->schedule_fingerprint = b.schedule_fp;
  out->augment_fingerprint = b.augment_fp;
  return SL_OK;
}

const char *sl_loader_left_out(const sl_loader *ld) {
  return ld && !SL_LOADER_FAILED(ld) && ld->src.left_out_names
             ? ld->src.left_out_names
             : "";
}

sl_status sl_loader_stats_get(sl_loader *ld, sl_loader_stats *out) {
  if (!ld || !out)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return sl_loader_not_open(ld);
  sl_err_clear(&ld->err);
  sl_pool_stats_get(ld->pool, out); /* the workers' counters, zero else */
  out->epoch = ld->epoch;
  out->batches = ld->batches;
  out->left_out = ld->src.left_out;
  out->slot_wait_ns = sl_ring_slot_wait_ns(ld->ring);
  out->consumer_wait_ns = ld->consumer_wait_ns;
  out->epoch_batches = ld->epoch_batches;
  if (ld->started) {
    out->epoch_seconds = (double)(sl_now_ns() - ld->epoch_t0) / 1e9;
    if (out->epoch_seconds > 0)
      out->images_per_s =
          (double)ld->epoch_batches * ld->batch_size / out->epoch_seconds;
  }
  out->workers = (uint32_t)ld->plan.workers;
  out->backend = sl_ring_backend_name(ld->ring);
  out->backend_note = ld->backend_note;
  if (ld->src.net_stats) {
    sl_sample_net n = {0};
    ld->src.net_stats(ld->src.ctx, &n);
    out->fetches = n.fetches;
    out->bytes_fetched = n.bytes_fetched;
    out->cache_hits = n.hits;
    out->cache_misses = n.misses;
    out->fetch_wait_ns = n.wait_ns;
  }
  return SL_OK;
}
