/* common/url_shown.h: URLs shown without their credentials, alone and
 * inside messages (sl_err's), cut short or not; local paths untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/url_shown.h"

static void shown_is(const char *url, const char *want) {
  char buf[512];
  assert_string_equal(sl_url_shown(url, buf, sizeof buf), want);
}

static void test_one_url(void **state) {
  (void)state;
  shown_is("https://user:secret@host.example/data/train-{0..3}.tar",
           "https://host.example/data/train-{0..3}.tar");
  shown_is("http://u:p@w@127.0.0.1:8080/a.rec", "http://127.0.0.1:8080/a.rec");
  shown_is("https://h/k/x.tar?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc",
           "https://h/k/x.tar");
  shown_is("https://h/x#frag", "https://h/x");
  shown_is("s3://bucket/key.tar", "s3://bucket/key.tar");
  shown_is("https://user:pa?ss@h/x", "https://h/x"); /* '?' unencoded */
  shown_is("/local/pa?th/x:y@z.rec", "/local/pa?th/x:y@z.rec");
  shown_is("http://h/a\nb", "http://h/a?b"); /* control characters */
  char small[12];
  sl_url_shown("https://user:secret@host/x", small, sizeof small);
  assert_string_equal(small, "https://hos");
}

static void in_text_is(const char *text, const char *want) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  sl_text_hide_credentials(buf);
  assert_string_equal(buf, want);
}

static void test_in_text(void **state) {
  (void)state;
  in_text_is("https://u:secret@h/a.rec: HTTP 404 (no such object)",
             "https://h/a.rec: HTTP 404 (no such object)");
  in_text_is("https://h/a.rec?X-Amz-Signature=sig: HTTP 403",
             "https://h/a.rec: HTTP 403");
  in_text_is("`sluice info http://u:secret@h/x.tar --speed` measures",
             "`sluice info http://h/x.tar --speed` measures");
  in_text_is("a (from s3://b/k?sig=1) and http://u:p@h/y, z",
             "a (from s3://b/k) and http://h/y, z");
  in_text_is("run `sluice index http://u:p@h/t-{0..3}.tar` to index",
             "run `sluice index http://h/t-{0..3}.tar` to index");
  /* Cut short inside the password: the host part dropped. */
  in_text_is("shard https://user:sec", "shard https://");
  in_text_is("no URL here: a:b@c", "no URL here: a:b@c");
}

static void test_err_messages(void **state) {
  (void)state;
  sl_err err;
  sl_err_set(&err, SL_EIO, "%s: shard %s failed",
             "https://u:secret@h/t-{0..1}.tar", "https://u:secret@h/t-1.tar");
  assert_null(strstr(err.msg, "secret"));
  assert_string_equal(err.msg,
                      "https://h/t-{0..1}.tar: shard https://h/t-1.tar "
                      "failed");
  sl_err_errno(&err, SL_EIO, 2, "http://h/a?X-Amz-Signature=sig");
  assert_string_equal(err.msg, "http://h/a: No such file or directory");
  sl_err_set(&err, SL_EIO, "HTTP 404");
  sl_err_prefix(&err, "%s: ", "http://u:secret@h/a.rec");
  assert_string_equal(err.msg, "http://h/a.rec: HTTP 404");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_url),
      cmocka_unit_test(test_in_text),
      cmocka_unit_test(test_err_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
