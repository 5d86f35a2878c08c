/* libsluice's side of the CUDA plugin (cuda_plugin.h). */
#include "loader/cuda/cuda_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* dir/SL_CUDA_PLUGIN_FILE into path; false when it does not exist. */
static bool plugin_in(const char *dir, size_t dir_len, char *path,
                      size_t path_size) {
  int n = snprintf(path, path_size, "%.*s/%s", (int)dir_len, dir,
                   SL_CUDA_PLUGIN_FILE);
  return n > 0 && (size_t)n < path_size && access(path, F_OK) == 0;
}

sl_status sl_cuda_plugin_load(const sl_cuda_plugin **out, sl_err *err) {
  *out = NULL;
  /* The file holding this code: a shared object's path from its link map;
   * the main program (a static link) has an empty name there, so
   * /proc/self/exe. */
  Dl_info info;
  struct link_map *map = NULL;
  char exe[PATH_MAX];
  const char *file = NULL;
  if (dladdr1((void *)sl_cuda_plugin_load, &info, (void **)&map,
              RTLD_DL_LINKMAP) &&
      map && map->l_name && map->l_name[0]) {
    /* A relative name (PYTHONPATH=build/python) is as the working folder
     * was at load: the best guess left. */
    file = map->l_name[0] == '/' ? map->l_name : realpath(map->l_name, exe);
  } else {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = '\0';
      file = exe;
    }
  }
  if (!file || file[0] != '/')
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "the CUDA backend (%s): cannot tell which file holds "
                      "libsluice, to look beside it",
                      SL_CUDA_PLUGIN_FILE);
  size_t here = (size_t)(strrchr(file, '/') - file), up = here;
  while (up > 0 && file[up - 1] != '/')
    up--; /* one folder up: the wheel's program in sluice/bin/ */
  char path[PATH_MAX];
  if (!plugin_in(file, here ? here : 1, path, sizeof path) &&
      !(up > 1 && plugin_in(file, up - 1, path, sizeof path)))
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "no CUDA backend: %s is neither beside %s nor one "
                      "folder up (libsluice built without it?)",
                      SL_CUDA_PLUGIN_FILE, file);
  /* NODELETE: backends made by the plugin may outlive this call's handle;
   * the library stays mapped once loaded, as cudart does. */
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    const char *e = dlerror();
    /* The dynamic loader's reason first: it is what a short note keeps. */
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "CUDA backend not loaded: %s (%s needs the CUDA runtime: "
                      "the system's, or torch's nvidia-cuda-runtime wheel "
                      "with torch imported first)",
                      e ? e : "dlopen failed", path);
  }
  sl_cuda_plugin_entry entry;
  void *sym = dlsym(h, SL_CUDA_PLUGIN_ENTRY);
  memcpy(&entry, &sym, sizeof entry); /* ISO C: no object-to-function cast */
  const sl_cuda_plugin *p = sym ? entry() : NULL;
  dlclose(h); /* NODELETE: the mapping stays; the count stays balanced */
  if (!p || p->abi != SL_CUDA_PLUGIN_ABI || p->size != sizeof *p)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "the CUDA backend %s beside libsluice is from another "
                      "build (no %s of ABI %d)",
                      SL_CUDA_PLUGIN_FILE, SL_CUDA_PLUGIN_ENTRY,
                      SL_CUDA_PLUGIN_ABI);
  *out = p;
  return SL_OK;
}
