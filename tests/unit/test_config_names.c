/* sl_config's renamed keys: dataset.entries and dataset.axis_order work,
 * their old names (dataset.layout, dataset.array_layout) still work and
 * mean the same (every option's text, the settings and the state blob's
 * fingerprints alike), and a key set by both names is refused with a
 * message naming both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "loader/config.h"
#include "loader/fingerprint.h"
#include "loader/settings.h"
#include "sluice.h"

static const char k_new_ini[] = "[dataset]\n"
                                "entries = array\n"
                                "axis_order = nchw\n"
                                "[augment]\n"
                                "layout = nhwc\n"
                                "auto = trivial\n";
static const char k_old_ini[] = "[dataset]\n"
                                "layout = array\n"
                                "array_layout = nchw\n"
                                "[augment]\n"
                                "layout = nhwc\n"
                                "auto = trivial\n";

static sl_config *make(void) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  return cfg;
}

static void check_value(const sl_config *cfg, const char *key,
                        const char *want) {
  char buf[256];
  assert_int_equal(sl_config_get(cfg, key, buf, sizeof buf), SL_OK);
  assert_string_equal(buf, want);
}

static void check_msg(const sl_config *cfg, const char *needle) {
  if (!strstr(sl_config_errmsg(cfg), needle))
    fail_msg("'%s' lacks '%s'", sl_config_errmsg(cfg), needle);
}

static void test_new_names(void **state) {
  (void)state;
  sl_config *cfg = make();
  assert_int_equal(sl_config_set(cfg, "dataset.entries", "caffe"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.axis_order", "nwhc"), SL_OK);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_DATASET_ENTRIES), SL_ENTRIES_CAFFE);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_DATASET_AXIS_ORDER), SL_AXES_NWHC);
  check_value(cfg, "dataset.entries", "caffe");
  check_value(cfg, "dataset.axis_order", "nwhc");
  sl_config_destroy(cfg);
}

/* An old name sets the new key, and reads it back. */
static void test_old_names(void **state) {
  (void)state;
  sl_config *cfg = make();
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "msgpack"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.array_layout", "ncwh"), SL_OK);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_DATASET_ENTRIES),
                   SL_ENTRIES_MSGPACK);
  assert_int_equal(sl_cfg_enum(cfg, SL_OPT_DATASET_AXIS_ORDER), SL_AXES_NCWH);
  check_value(cfg, "dataset.entries", "msgpack");
  check_value(cfg, "dataset.layout", "msgpack");
  check_value(cfg, "dataset.array_layout", "ncwh");
  /* A bad value names the key as written. */
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "cafe"), SL_ECONFIG);
  check_msg(cfg, "dataset.layout = 'cafe'");
  check_value(cfg, "dataset.entries", "msgpack");
  /* The listing has the new names only. */
  int seen = 0;
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    assert_int_equal(sl_option_info_get(i, &info), SL_OK);
    assert_string_not_equal(info.key, "dataset.layout");
    assert_string_not_equal(info.key, "dataset.array_layout");
    seen += !strcmp(info.key, "dataset.entries") +
            !strcmp(info.key, "dataset.axis_order");
  }
  assert_int_equal(seen, 2);
  sl_config_destroy(cfg);
}

/* A config written with the old names is the same config: every option's
 * text, the settings the loader reads and the state blob's fingerprints
 * (so a state saved under one resumes under the other). */
static void test_old_and_new_are_one_config(void **state) {
  (void)state;
  sl_config *a = make(), *b = make();
  assert_int_equal(sl_config_load_ini_string(a, k_new_ini, "new.ini"), SL_OK);
  assert_int_equal(sl_config_load_ini_string(b, k_old_ini, "old.ini"), SL_OK);
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    assert_int_equal(sl_option_info_get(i, &info), SL_OK);
    char ta[512], tb[512];
    assert_int_equal(sl_config_get(a, info.key, ta, sizeof ta), SL_OK);
    assert_int_equal(sl_config_get(b, info.key, tb, sizeof tb), SL_OK);
    assert_string_equal(ta, tb);
  }
  static sl_settings sa, sb; /* large: off the stack */
  sl_settings_read(&sa, a);
  sl_settings_read(&sb, b);
  assert_int_equal(sa.source.entries, SL_ENTRIES_ARRAY);
  assert_int_equal(sb.source.entries, SL_ENTRIES_ARRAY);
  assert_int_equal(sa.source.axis_order, SL_AXES_NCHW);
  assert_int_equal(sb.source.axis_order, SL_AXES_NCHW);
  uint64_t sched_a, aug_a, sched_b, aug_b;
  uint16_t tags_a[SL_AUGMENT_GROUPS], tags_b[SL_AUGMENT_GROUPS];
  sl_settings_fingerprints(&sa, 0, &sched_a, &aug_a, tags_a);
  sl_settings_fingerprints(&sb, 0, &sched_b, &aug_b, tags_b);
  assert_true(sched_a == sched_b);
  assert_true(aug_a == aug_b);
  assert_memory_equal(tags_a, tags_b, sizeof tags_a);
  sl_config_destroy(a);
  sl_config_destroy(b);
}

/* Both names in one file: refused, naming both and the other's line; the
 * file applies not at all. */
static void test_both_names_in_ini(void **state) {
  (void)state;
  sl_config *cfg = make();
  assert_int_equal(
      sl_config_load_ini_string(
          cfg, "[dataset]\nlayout = caffe\n\nentries = images\n", "t.ini"),
      SL_ECONFIG);
  check_msg(cfg, "t.ini:4: dataset.layout and dataset.entries are one key "
                 "(dataset.layout is its old name): set only dataset.entries "
                 "(the other set on line 2)");
  check_value(cfg, "dataset.entries", "auto");
  assert_int_equal(
      sl_config_load_ini_string(
          cfg, "[dataset]\naxis_order = nhwc\narray_layout = nhwc\n", "t.ini"),
      SL_ECONFIG);
  check_msg(cfg, "t.ini:3: dataset.array_layout and dataset.axis_order are "
                 "one key");
  /* The same name twice is still the plain duplicate. */
  assert_int_equal(
      sl_config_load_ini_string(
          cfg, "[dataset]\nlayout = caffe\nlayout = caffe\n", "t.ini"),
      SL_ECONFIG);
  check_msg(cfg, "t.ini:3: duplicate key dataset.layout (first set on line 2)");
  sl_config_destroy(cfg);
}

/* sl_config_set by one name and then the other is refused (the value
 * stays); by the same name twice is a plain change. An INI file's values
 * replace what calls set, whatever the name, and later calls may use
 * either. */
static void test_both_names_set(void **state) {
  (void)state;
  sl_config *cfg = make();
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "caffe"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "images"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.entries", "pickle"), SL_ECONFIG);
  check_msg(cfg, "dataset.layout and dataset.entries are one key");
  check_value(cfg, "dataset.entries", "images");
  assert_int_equal(sl_config_set(cfg, "dataset.axis_order", "nhwc"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.array_layout", "nchw"),
                   SL_ECONFIG);
  check_msg(cfg, "dataset.array_layout and dataset.axis_order are one key");
  check_value(cfg, "dataset.axis_order", "nhwc");
  /* Python's Loader("x.ini", entries=...): the file, then the call. */
  assert_int_equal(
      sl_config_load_ini_string(cfg, "[dataset]\nentries = caffe\n", "t.ini"),
      SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "msgpack"), SL_OK);
  check_value(cfg, "dataset.entries", "msgpack");
  sl_config_destroy(cfg);
}

static void keep_log(void *user, sl_log_level level, const char *message) {
  char *buf = user;
  assert_int_equal(level, SL_LOG_INFO);
  snprintf(buf, 512, "%s", message);
}

/* An old name logs a one-line note through the config's callback. */
static void test_old_name_note(void **state) {
  (void)state;
  sl_config *cfg = make();
  char got[512] = "";
  sl_config_set_log(cfg, keep_log, got);
  assert_int_equal(sl_config_set(cfg, "dataset.entries", "caffe"), SL_OK);
  assert_string_equal(got, "");
  assert_int_equal(sl_config_load_ini_string(cfg, k_old_ini, "old.ini"), SL_OK);
  /* The last note: the file's second old name. */
  assert_string_equal(got, "old.ini:3: dataset.array_layout is the old name "
                           "of dataset.axis_order; it still works");
  assert_int_equal(sl_config_set(cfg, "dataset.layout", "images"), SL_OK);
  assert_string_equal(
      got, "dataset.layout is the old name of dataset.entries; it still works");
  sl_config_destroy(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_new_names),
      cmocka_unit_test(test_old_names),
      cmocka_unit_test(test_old_and_new_are_one_config),
      cmocka_unit_test(test_both_names_in_ini),
      cmocka_unit_test(test_both_names_set),
      cmocka_unit_test(test_old_name_note),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
