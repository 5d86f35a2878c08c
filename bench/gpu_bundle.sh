#!/usr/bin/env bash
# Prepares, on a machine with Debian's package tools and a registry, what
# bench/gpu.sh needs on a GPU machine that has CUDA, CMake, ninja and Python
# but no -dev packages and no registry: sluice's dependencies as Debian
# packages (`apt-get download`), unpacked with `dpkg -x` into a private
# prefix (never over /), trimmed and packed into one tarball, which travels
# with the working tree (`carry`) and which gpu.sh unpacks into a prefix of
# its own there.
#
#   bench/gpu_bundle.sh            writes .gpu-deps/bundle.tar.gz (git-ignored)
#
# The bundle holds the headers, .so links and .pc files of each -dev package
# sluice builds against, the runtime libraries they and their dependencies
# load (all but glibc, libgcc and libstdc++, which every machine has), and
# pkgconf. Its .pc files name the prefix as @SLUICE_DEPS@, which gpu.sh
# replaces with the prefix it unpacks into. Size: about 13 MiB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.gpu-deps
# What sluice builds against (cmake/SluiceDeps.cmake), and pkg-config.
dev_pkgs=(liblmdb-dev libhdf5-dev libjpeg62-turbo-dev libturbojpeg0-dev
  libpng-dev libwebp-dev libinih-dev liburing-dev libyuv-dev libcmocka-dev
  zlib1g-dev liblzf-dev libblosc-dev pkgconf-bin libpkgconf3)
# What libsluice and the tests load at run time, found with ldd on a build
# here (`ldd build/libsluice.so | dpkg -S`), less glibc/libgcc/libstdc++.
run_pkgs=(liblmdb0 libhdf5-103-1 libjpeg62-turbo libturbojpeg0 libpng16-16
  libwebp7 libinih1 liburing2 libyuv0 libcmocka0 libaec0 libsz2 zlib1g liblzf1
  libblosc1 liblz4-1 libsnappy1v5
  libcurl4 libbrotli1 libcom-err2 libffi8 libgmp10 libgnutls30
  libgssapi-krb5-2 libhogweed6 libidn2-0 libk5crypto3 libkeyutils1 libkrb5-3
  libkrb5support0 libldap-2.5-0 libnettle8 libnghttp2-14 libp11-kit0 libpsl5
  librtmp1 libsasl2-2 libssh2-1 libssl3 libtasn1-6 libunistring2 libzstd1)

if [ "${1:-}" = "--list" ]; then # the package names, for the rehearsal
  printf '%s\n' "${dev_pkgs[@]}" "${run_pkgs[@]}"
  exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
  echo "gpu_bundle.sh: needs apt-get and dpkg (a Debian machine)" >&2
  exit 1
fi
mkdir -p "$out/debs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== apt-get download (${#dev_pkgs[@]} + ${#run_pkgs[@]} packages)"
# apt-get download writes into the current directory; _apt cannot write
# there as another user, which apt only warns about.
(
  cd "$out/debs"
  rm -f ./*.deb
  apt-get download "${dev_pkgs[@]}" "${run_pkgs[@]}" 2>&1 |
    grep -v 'couldn.t be accessed by user'
) || true # the count below says whether every package came
n=$(find "$out/debs" -name '*.deb' | wc -l)
want=$((${#dev_pkgs[@]} + ${#run_pkgs[@]}))
[ "$n" -eq "$want" ] || {
  echo "gpu_bundle.sh: got $n of $want packages" >&2
  exit 1
}
echo "== dpkg -x into a private prefix"
p=$tmp/prefix
mkdir -p "$p"
for d in "$out"/debs/*.deb; do dpkg -x "$d" "$p"; done
# Trim what neither a build nor a run reads: static archives, docs, the
# C++/Fortran/high-level HDF5 parts, tools.
rm -rf "${p:?}/usr/share/doc" "$p/usr/share/man" "$p/usr/share/lintian" \
  "$p/usr/share/bug" "$p/usr/share/info" "${p:?}/etc" "$p/usr/sbin"
find "$p" \( -name '*.a' -o -name '*fortran*' -o -name '*.mod' \) -print0 |
  xargs -0 rm -rf
# Bookworm keeps some libraries in /lib: one tree, as merged-/usr has it.
if [ -d "$p/lib" ] && [ ! -L "$p/lib" ]; then
  mkdir -p "$p/usr/lib"
  cp -a "$p/lib/." "$p/usr/lib/"
  rm -rf "${p:?}/lib"
  ln -s usr/lib "$p/lib"
fi
# Absolute links inside the prefix would point at this machine's /usr.
find "$p" -type l | while read -r l; do
  t=$(readlink "$l")
  case $t in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$p$t")" "$l" ;; esac
done
# .pc files name /usr: make them name the prefix gpu.sh unpacks into.
find "$p" -name '*.pc' -print0 | xargs -0 sed -i -E \
  -e 's#^(prefix|libdir|includedir|exec_prefix)=/usr#\1=@SLUICE_DEPS@/usr#' \
  -e 's#(-[IL])/usr#\1@SLUICE_DEPS@/usr#g'
# pkg-config, running the bundled pkgconf on the bundled libpkgconf.
mkdir -p "$p/bin"
cat >"$p/bin/pkg-config" <<'EOF'
#!/bin/sh
d=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH=$d/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  exec "$d/usr/bin/pkgconf" "$@"
EOF
chmod +x "$p/bin/pkg-config"
printf '%s\n' "${dev_pkgs[@]}" "${run_pkgs[@]}" >"$p/PACKAGES"
(cd "$out/debs" && ls) >"$p/VERSIONS"
tar -C "$p" -czf "$out/bundle.tar.gz.tmp" .
mv "$out/bundle.tar.gz.tmp" "$out/bundle.tar.gz"
rm -rf "$out/debs"
size=$(du -k "$out/bundle.tar.gz" | cut -f1)
echo "gpu_bundle.sh: $out/bundle.tar.gz, $((size / 1024)) MiB ($size KiB)"
[ "$size" -lt $((60 * 1024)) ] || {
  echo "gpu_bundle.sh: over 60 MiB: it would not travel with the tree" >&2
  exit 1
}
