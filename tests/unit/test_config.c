/* sl_config: parsing of every type, INI errors with file:line, suggestions,
 * duplicates, atomic application and cross-field validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/config.h"
#include "sluice.h"

static int setup(void **state) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return -1;
  *state = cfg;
  return 0;
}

static int teardown(void **state) {
  sl_config_destroy(*state);
  return 0;
}

static void check_value(sl_config *cfg, const char *key, const char *want) {
  char buf[256];
  assert_int_equal(sl_config_get(cfg, key, buf, sizeof buf), SL_OK);
  assert_string_equal(buf, want);
}

static void test_defaults(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE), 256);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_LOADER_ORDER), SL_ORDER_QUASI);
  assert_true(sl_cfg_bool(cfg, SL_OPT_LOADER_DROP_LAST));
  assert_int_equal(sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET), 1ull << 30);
  int n;
  const double *mean = sl_cfg_floats(cfg, SL_OPT_AUGMENT_MEAN, &n);
  assert_int_equal(n, 3);
  assert_true(mean[1] == 0.456);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "");
  assert_int_equal(sl_config_validate(cfg), SL_OK);
  /* Every option in the table round-trips through get and set. */
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    assert_int_equal(sl_option_info_get(i, &info), SL_OK);
    assert_non_null(strchr(info.key, '.'));
    assert_true(strlen(info.help) > 10);
    char buf[512];
    assert_int_equal(sl_config_get(cfg, info.key, buf, sizeof buf), SL_OK);
    assert_int_equal(sl_config_set(cfg, info.key, buf), SL_OK);
  }
  sl_option_info info;
  assert_int_equal(sl_option_info_get(sl_option_count(), &info), SL_EINVAL);
}

static void test_set_each_type(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(sl_config_set(cfg, "loader.batch_size", " 64 "), SL_OK);
  assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE), 64);
  assert_int_equal(sl_config_set(cfg, "device.vram_budget", "512 MiB"), SL_OK);
  assert_int_equal(sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET), 512u << 20);
  check_value(cfg, "device.vram_budget", "512MiB");
  assert_int_equal(sl_config_set(cfg, "device.vram_budget", "1.5GiB"), SL_OK);
  check_value(cfg, "device.vram_budget", "1536MiB");
  assert_int_equal(sl_config_set(cfg, "device.vram_budget", "2GB"), SL_OK);
  assert_int_equal(sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET), 2000000000ull);
  assert_int_equal(sl_config_set(cfg, "augment.flip", "0.25"), SL_OK);
  assert_true(sl_cfg_float(cfg, SL_OPT_AUGMENT_FLIP) == 0.25);
  assert_int_equal(sl_config_set(cfg, "augment.mean", "0.5"), SL_OK);
  int n;
  sl_cfg_floats(cfg, SL_OPT_AUGMENT_MEAN, &n);
  assert_int_equal(n, 1);
  assert_int_equal(sl_config_set(cfg, "augment.dtype", "bf16"), SL_OK);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_AUGMENT_DTYPE), SL_DTYPE_BF16);
  assert_int_equal(sl_config_set(cfg, "loader.drop_last", "No"), SL_OK);
  assert_false(sl_cfg_bool(cfg, SL_OPT_LOADER_DROP_LAST));
  assert_int_equal(sl_config_set(cfg, "dataset.path", "/data/x.lmdb"), SL_OK);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "/data/x.lmdb");
  assert_int_equal(
      sl_config_set(cfg, "resolution.steps", "0:128, 6:160,12 : 224"), SL_OK);
  const sl_steps *st = sl_cfg_steps(cfg, SL_OPT_RESOLUTION_STEPS);
  assert_int_equal(st->n, 3);
  assert_int_equal(st->v[2].epoch, 12);
  assert_int_equal(st->v[2].res, 224);
  check_value(cfg, "resolution.steps", "0:128, 6:160, 12:224");
}

/* A bad value is rejected with the key, the value and what is allowed; the
 * old value stays. */
static void test_bad_values(void **state) {
  sl_config *cfg = *state;
  static const struct {
    const char *key, *value, *needle;
  } cases[] = {
      {"loader.batch_size", "abc", "expected an integer in 1..65536"},
      {"loader.batch_size", "0", "1..65536"},
      {"loader.batch_size", "12x", "integer"},
      {"loader.batch_size", "", "integer"},
      {"loader.batch_size", "99999999999999999999", "integer"},
      {"device.vram_budget", "1 parsec", "expected a size"},
      {"device.vram_budget", "-5MiB", "size"},
      {"device.vram_budget", "100", "1MiB..1TiB"},
      {"augment.flip", "1.5", "0.0..1.0"},
      {"augment.flip", "nan", "number"},
      {"augment.scale", "0.5", "1 value given; expected 2"},
      {"augment.scale", "0.1, x", "item 2"},
      {"augment.mean", "1,2", "2 values given; expected 1|3"},
      {"augment.mean", "1,2,3,4,5", "expected"},
      {"augment.dtype", "int8", "one of u8|fp16|bf16|fp32"},
      {"loader.drop_last", "maybe", "true or false"},
      {"resolution.steps", "1:128", "epoch 0"},
      {"resolution.steps", "0:128, 0:160", "increase"},
      {"resolution.steps", "0:4", "8..8192"},
      {"resolution.steps", "0-128", "':'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char before[256];
    assert_int_equal(sl_config_get(cfg, cases[i].key, before, sizeof before),
                     SL_OK);
    assert_int_equal(sl_config_set(cfg, cases[i].key, cases[i].value),
                     SL_ECONFIG);
    const char *msg = sl_config_errmsg(cfg);
    if (!strstr(msg, cases[i].needle) || !strstr(msg, cases[i].key))
      fail_msg("%s = '%s': message '%s' lacks '%s'", cases[i].key,
               cases[i].value, msg, cases[i].needle);
    check_value(cfg, cases[i].key, before);
  }
}

static void test_unknown_key_suggests(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(sl_config_set(cfg, "loader.batchsize", "4"), SL_ECONFIG);
  assert_non_null(
      strstr(sl_config_errmsg(cfg), "did you mean loader.batch_size?"));
  assert_int_equal(sl_config_set(cfg, "loader.path", "x"), SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "did you mean dataset.path?"));
  assert_int_equal(sl_config_set(cfg, "zzz.qqqqqqqqq", "x"), SL_ECONFIG);
  assert_null(strstr(sl_config_errmsg(cfg), "did you mean"));
  /* Enum values get the same help as keys (issue 40): a choice the text
   * starts with, one that starts with the text, or a near spelling. */
  assert_int_equal(sl_config_set(cfg, "augment.auto", "trivialaugment"),
                   SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "augment.auto = "
                                                "'trivialaugment': expected"));
  assert_non_null(strstr(sl_config_errmsg(cfg), "(did you mean trivial?)"));
  assert_int_equal(sl_config_set(cfg, "augment.auto", "RandAug"), SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "did you mean randaugment?"));
  assert_int_equal(sl_config_set(cfg, "loader.order", "quasirandom"),
                   SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "did you mean quasi_random?"));
  assert_int_equal(sl_config_set(cfg, "augment.auto", "zzzzzzzz"), SL_ECONFIG);
  assert_null(strstr(sl_config_errmsg(cfg), "did you mean"));
  char buf[8];
  assert_int_equal(sl_config_get(cfg, "nope", buf, sizeof buf), SL_ECONFIG);
  assert_int_equal(sl_config_get(cfg, "dataset.format", buf, 2), SL_ETOOBIG);
}

static const char *k_good_ini = "; a training config\n"
                                "[dataset]\n"
                                "path = train.lmdb ; inline comment\n"
                                "\n"
                                "[loader]\n"
                                "batch_size = 128\n"
                                "order = random\n"
                                "[resolution]\n"
                                "schedule = linear\n"
                                "min = 160\n"
                                "max = 192\n"
                                "start_epoch = 11\n"
                                "end_epoch = 13\n"
                                "[device]\n"
                                "vram_budget = 2GiB\n";

static void test_ini_string(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(sl_config_load_ini_string(cfg, k_good_ini, "good.ini"),
                   SL_OK);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "train.lmdb");
  assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE), 128);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_RESOLUTION_SCHEDULE),
                   SL_SCHEDULE_LINEAR);
  assert_int_equal(sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET), 2ull << 30);
}

/* Each bad file names file:line and the problem, and changes nothing. */
static void test_ini_errors_atomic(void **state) {
  sl_config *cfg = *state;
  static const struct {
    const char *text, *needle;
  } cases[] = {
      {"[loader]\nbatch_size = 64\nbatchsize = 3\n",
       "t.ini:3: unknown key 'loader.batchsize' (did you mean "
       "loader.batch_size?)"},
      {"[loader]\nbatch_size = 64\n\nbatch_size = 32\n",
       "t.ini:4: duplicate key loader.batch_size (first set on line 2)"},
      {"[loader]\nbatch_size = 64\nworkers = lots\n",
       "t.ini:3: loader.workers = 'lots': expected an integer in 0..1024"},
      {"batch_size = 3\n", "t.ini:1: key 'batch_size' is outside any"},
      {"[loader]\nbatch_size = 64\nthis is not ini\n", "t.ini:3: syntax error"},
      {"[loader]\nbatch_size = 64\n[resolution]\nschedule = linear\n"
       "min = 300\nmax = 200\n",
       "t.ini: resolution.min (300) must not exceed resolution.max (200)"},
      {"[loader]\nrank = 2\nworld_size = 2\n",
       "loader.rank (2) must be less than loader.world_size (2)"},
      {"[resolution]\nschedule = steps\n", "needs resolution.steps"},
      {"[augment]\nscale = 0.9, 0.1\n", "augment.scale: the lower bound"},
      {"[augment]\nmean = 0.5\n", "augment.mean has 1 values but augment.std"},
      {"[resolution]\nschedule = steps\nmax = 128\nsteps = 0:128, 3:160\n",
       "t.ini: resolution.steps: step 2 (3:160) exceeds resolution.max (128)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(sl_config_load_ini_string(cfg, cases[i].text, "t.ini"),
                     SL_ECONFIG);
    if (!strstr(sl_config_errmsg(cfg), cases[i].needle))
      fail_msg("case %zu: '%s' lacks '%s'", i, sl_config_errmsg(cfg),
               cases[i].needle);
    /* Atomic: the good lines before the bad one were not applied. */
    assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE), 256);
  }
}

/* One load reports every error: the bad lines and then every relation
 * that fails among the good values, but none on a key whose line was bad
 * (max stays 224 after 'max = abc': min = 300 against it would be an
 * echo). The message has no length limit. */
static void test_ini_every_error_at_once(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(
      sl_config_load_ini_string(cfg,
                                "[loader]\nworkers = lots\nrank = 3\n"
                                "world_size = 2\n[resolution]\n"
                                "schedule = linear\nmin = 300\nmax = abc\n"
                                "start_epoch = 9\nend_epoch = 3\n"
                                "[augment]\nscale = 0.9, 0.1\n"
                                "ratio = 2, 1\nmean = 0.5\n"
                                "blur_kernel = 4\n"
                                "erasing_scale = 0.5, 0.1\n",
                                "t.ini"),
      SL_ECONFIG);
  const char *msg = sl_config_errmsg(cfg);
  static const char *const needles[] = {
      "t.ini:2: loader.workers = 'lots'",
      "t.ini:8: resolution.max = 'abc'",
      "t.ini: resolution.start_epoch (9) must not exceed",
      "t.ini: loader.rank (3) must be less than loader.world_size (2)",
      "t.ini: augment.scale: the lower bound (0.9)",
      "t.ini: augment.ratio: the lower bound (2)",
      "t.ini: augment.mean has 1 values but augment.std has 3",
      "t.ini: augment.blur_kernel: 4 is even",
      "t.ini: augment.erasing_scale: the lower bound (0.5)",
  };
  for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
    if (!strstr(msg, needles[i]))
      fail_msg("'%s' lacks '%s'", msg, needles[i]);
  assert_null(strstr(msg, "resolution.min (300)"));
  assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_RANK), 0);
  /* More errors than a fixed message holds: every one is there. */
  char text[8192];
  size_t used = (size_t)snprintf(text, sizeof text, "[loader]\n");
  for (int i = 0; i < 100; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "no_such_key_%03d = 1\n", i);
  assert_int_equal(sl_config_load_ini_string(cfg, text, "t.ini"), SL_ECONFIG);
  msg = sl_config_errmsg(cfg);
  assert_true(strlen(msg) > 4000);
  assert_non_null(
      strstr(msg, "t.ini:101: unknown key 'loader.no_such_key_099'"));
  /* sl_config_validate lists every relation too, and a later success clears
   * the list. */
  assert_int_equal(sl_config_set(cfg, "loader.rank", "5"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.ratio", "3, 1"), SL_OK);
  assert_int_equal(sl_config_validate(cfg), SL_ECONFIG);
  msg = sl_config_errmsg(cfg);
  assert_non_null(strstr(msg, "loader.rank (5)"));
  assert_non_null(strstr(msg, "\naugment.ratio: the lower bound (3)"));
  assert_int_equal(sl_config_set(cfg, "loader.rank", "0"), SL_OK);
  assert_string_equal(sl_config_errmsg(cfg), "");
}

/* sl_config_check_ini applies the good lines of a bad file (so a checker
 * can go on to open the dataset they name) and reports the same errors. */
static void test_check_ini_applies_good_lines(void **state) {
  sl_config *cfg = *state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char path[512];
  snprintf(path, sizeof path, "%s/test_check_%d.ini", tmp ? tmp : "/tmp",
           (int)getpid());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("[dataset]\npath = /data/t.lmdb\n[loader]\nbatch_size = 64\n"
        "workers = lots\n",
        f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(sl_config_check_ini(cfg, path), SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), ":5: loader.workers"));
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "/data/t.lmdb");
  assert_int_equal(sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE), 64);
  sl_config *c2;
  assert_int_equal(sl_config_create(&c2), SL_OK);
  assert_int_equal(sl_config_load_ini(c2, path), SL_ECONFIG);
  assert_string_equal(sl_config_errmsg(c2), sl_config_errmsg(cfg));
  assert_int_equal(sl_cfg_int(c2, SL_OPT_LOADER_BATCH_SIZE), 256);
  sl_config_destroy(c2);
  unlink(path);
}

/* Cross-field checks look only at the keys the chosen setting reads: a
 * constant schedule reads max alone, steps neither min nor max, and a crop
 * other than random_resized neither scale nor ratio. */
static void test_cross_checks_follow_setting(void **state) {
  sl_config *cfg = *state;
  static const char *const accepted[] = {
      "[resolution]\nschedule = constant\nmax = 128\n",
      "[resolution]\nmin = 300\nmax = 200\nstart_epoch = 9\nend_epoch = 3\n",
      "[resolution]\nschedule = steps\nsteps = 0:64\nmin = 300\nmax = 200\n",
      "[augment]\ncrop = center\nscale = 0.9, 0.1\nratio = 2, 1\n",
      "[augment]\ncrop = none\nscale = 0.9, 0.1\n",
  };
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    sl_config *c;
    assert_int_equal(sl_config_create(&c), SL_OK);
    if (sl_config_load_ini_string(c, accepted[i], "t.ini") != SL_OK)
      fail_msg("case %zu: %s", i, sl_config_errmsg(c));
    assert_int_equal(sl_config_validate(c), SL_OK);
    sl_config_destroy(c);
  }
  /* The keys still count where they are read. */
  assert_int_equal(
      sl_config_load_ini_string(
          cfg, "[resolution]\nschedule = linear\nmax = 128\n", "t.ini"),
      SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "resolution.min (160)"));
  assert_non_null(strstr(sl_config_errmsg(cfg), "schedule = linear"));
  assert_int_equal(sl_config_set(cfg, "augment.crop", "center"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.ratio", "2, 1"), SL_OK);
  assert_int_equal(sl_config_validate(cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "augment.crop", "random_resized"), SL_OK);
  assert_int_equal(sl_config_validate(cfg), SL_ECONFIG);
  assert_non_null(strstr(sl_config_errmsg(cfg), "augment.ratio"));
}

/* '#' after whitespace starts a comment, as ';' does (inih's inline
 * comments); a '#' inside a value stays. */
static void test_ini_inline_comments(void **state) {
  sl_config *cfg = *state;
  assert_int_equal(sl_config_load_ini_string(cfg,
                                             "# a comment line\n"
                                             "[loader]   # section comment\n"
                                             "workers = 2 # two workers\n"
                                             "batch_size = 64\t# a tab before\n"
                                             "seed = 7 ; the other kind\n"
                                             "[dataset]\n"
                                             "path = /data/run#3/train.lmdb\n",
                                             "t.ini"),
                   SL_OK);
  check_value(cfg, "loader.workers", "2");
  check_value(cfg, "loader.batch_size", "64");
  check_value(cfg, "loader.seed", "7");
  check_value(cfg, "dataset.path", "/data/run#3/train.lmdb");
}

static void test_ini_file(void **state) {
  sl_config *cfg = *state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char path[512];
  snprintf(path, sizeof path, "%s/test_config_%d.ini", tmp ? tmp : "/tmp",
           (int)getpid());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(k_good_ini, f);
  fputs("[augment]\ndtyp = fp32\n", f);
  fclose(f);
  assert_int_equal(sl_config_load_ini(cfg, path), SL_ECONFIG);
  char want[600];
  snprintf(want, sizeof want,
           "%s:17: unknown key 'augment.dtyp' (did you mean augment.dtype?)",
           path);
  assert_string_equal(sl_config_errmsg(cfg), want);
  unlink(path);
  assert_int_equal(sl_config_load_ini(cfg, path), SL_EIO);
  assert_non_null(strstr(sl_config_errmsg(cfg), "No such file"));
}

/* A relative path set in an INI file is read from the file's folder (made
 * absolute), whatever the working directory; an absolute one is kept, and
 * so is one given to sl_config_set or in text (no folder). */
static void test_ini_relative_paths(void **state) {
  sl_config *cfg = *state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char dir[512], path[600], real[4096], want[4200];
  snprintf(dir, sizeof dir, "%s/test_relpath_%d", tmp ? tmp : "/tmp",
           (int)getpid());
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/train.ini", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("[dataset]\npath = ../s2/train.lmdb\nlabel_file =  labels.txt\n"
        "labels_path = /abs/y.h5\nimages = x\n",
        f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(sl_config_load_ini(cfg, path), SL_OK);
  assert_non_null(realpath(dir, real));
  snprintf(want, sizeof want, "%s/../s2/train.lmdb", real);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), want);
  snprintf(want, sizeof want, "%s/labels.txt", real);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_LABEL_FILE), want);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_LABELS_PATH), "/abs/y.h5");
  /* An HDF5 dataset's name inside the file is no file path. */
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_IMAGES), "x");
  /* The same file named relatively, from its folder's parent. */
  char cwd[4096];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(dir), 0);
  assert_int_equal(chdir(".."), 0);
  const char *base = strrchr(dir, '/') + 1;
  snprintf(path, sizeof path, "%s/train.ini", base);
  assert_int_equal(sl_config_load_ini(cfg, path), SL_OK);
  snprintf(want, sizeof want, "%s/../s2/train.lmdb", real);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), want);
  assert_int_equal(chdir(cwd), 0);
  snprintf(path, sizeof path, "%s/train.ini", dir);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
  assert_int_equal(sl_config_set(cfg, "dataset.path", "rel/x.lmdb"), SL_OK);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "rel/x.lmdb");
  assert_int_equal(
      sl_config_load_ini_string(cfg, "[dataset]\npath = a.lmdb\n", "t.ini"),
      SL_OK);
  assert_string_equal(sl_cfg_str(cfg, SL_OPT_DATASET_PATH), "a.lmdb");
}

static void test_size_parser(void **state) {
  (void)state;
  uint64_t x;
  assert_true(sl_parse_size("4096", &x) && x == 4096);
  assert_true(sl_parse_size("4 KiB", &x) && x == 4096);
  assert_true(sl_parse_size("4K", &x) && x == 4096);
  assert_true(sl_parse_size("4kB", &x) && x == 4000);
  assert_true(sl_parse_size("1TiB", &x) && x == (1ull << 40));
  assert_false(sl_parse_size("0.5", &x));
  assert_false(sl_parse_size("1 GiB extra", &x));
  assert_false(sl_parse_size("1e30 TiB", &x));
  assert_false(sl_parse_size("", &x));
  /* Units in any case; GB is 10^9 and GiB 2^30 whatever the case. */
  assert_true(sl_parse_size("1 gb", &x) && x == 1000000000ull);
  assert_true(sl_parse_size("1 GB", &x) && x == 1000000000ull);
  assert_true(sl_parse_size("1 gib", &x) && x == (1ull << 30));
  assert_true(sl_parse_size("2 mib", &x) && x == (2ull << 20));
  assert_true(sl_parse_size("3 Kb", &x) && x == 3000);
  assert_true(sl_parse_size("5 b", &x) && x == 5);
  assert_false(sl_parse_size("1 gibibyte", &x));
}

/* The listing of a size option names every unit it takes. */
static void test_size_units_listed(void **state) {
  (void)state;
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    assert_int_equal(sl_option_info_get(i, &info), SL_OK);
    if (strcmp(info.key, "device.vram_budget") != 0)
      continue;
    assert_non_null(strstr(info.allowed, "GiB"));
    assert_non_null(strstr(info.allowed, "GB"));
    assert_non_null(strstr(info.allowed, "any case"));
    return;
  }
  fail_msg("no device.vram_budget option");
}

static void test_null_args(void **state) {
  (void)state;
  assert_int_equal(sl_config_create(NULL), SL_EINVAL);
  sl_config_destroy(NULL);
  assert_int_equal(sl_config_set(NULL, "a", "b"), SL_EINVAL);
  assert_int_equal(sl_config_load_ini(NULL, "x"), SL_EINVAL);
  sl_config *cfg = *state;
  assert_int_equal(sl_config_set(cfg, NULL, "b"), SL_EINVAL);
  assert_int_equal(sl_config_load_ini_string(cfg, NULL, NULL), SL_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_each_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_key_suggests, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ini_string, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ini_errors_atomic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ini_every_error_at_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_check_ini_applies_good_lines, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cross_checks_follow_setting, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ini_inline_comments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ini_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ini_relative_paths, setup, teardown),
      cmocka_unit_test(test_size_parser),
      cmocka_unit_test(test_size_units_listed),
      cmocka_unit_test_setup_teardown(test_null_args, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
