/* sl_strerror, sl_status_name and the version queries. */
#include "sluice.h"

#define SL_STR_(x) #x
#define SL_XSTR_(x) SL_STR_(x)

const char *sl_version_string(void) {
  return SL_XSTR_(SLUICE_VERSION_MAJOR) "." SL_XSTR_(
      SLUICE_VERSION_MINOR) "." SL_XSTR_(SLUICE_VERSION_PATCH);
}

unsigned sl_version_number(void) {
  return SLUICE_VERSION_NUMBER;
}

const char *sl_strerror(sl_status status) {
  switch (status) {
#define SL_STATUS_DESC_(name, value, desc)                                     \
  case SL_##name:                                                              \
    return desc;
    SL_STATUS_MAP(SL_STATUS_DESC_)
#undef SL_STATUS_DESC_
  }
  return "unknown status";
}

const char *sl_status_name(sl_status status) {
  switch (status) {
#define SL_STATUS_NAME_(name, value, desc)                                     \
  case SL_##name:                                                              \
    return "SL_" #name;
    SL_STATUS_MAP(SL_STATUS_NAME_)
#undef SL_STATUS_NAME_
  }
  return "SL_UNKNOWN";
}
