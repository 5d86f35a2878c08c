#!/usr/bin/env bash
# Installs the Debian 12 packages sluice needs (as root), or prints the exact
# apt-get line (otherwise). Idempotent: does nothing when all are present.
# Installs nothing from PyPI: the tests' PyPI packages go into a venv that
# scripts/test-venv.sh makes (scripts/test.sh does).
# Usage: scripts/deps.sh [--build | --extra]
#   --build   only what building libsluice, `sluice` and the examples needs
#             (scripts/demo.sh)
#   (none)    that and what the test suite needs
#   --extra   that and the sanitizer/fuzz/MPI/torch/peer tools (scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case $mode in
"" | --build | --extra) ;;
*) echo "usage: scripts/deps.sh [--build | --extra]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config
  liblmdb-dev                      # LMDB reader/writer
  libhdf5-dev                      # HDF5 (hdf5-serial)
  libjpeg62-turbo-dev libturbojpeg0-dev  # libjpeg API + TurboJPEG
  libpng-dev                       # PNG codec
  libwebp-dev                      # WebP codec (values of other tools' LMDBs)
  libyuv-dev                       # resize/convert
  libinih-dev                      # INI config parser
  liburing-dev                     # io_uring reads
  zlib1g-dev liblzf-dev            # HDF5 arrays: gzip and LZF chunks
  libblosc-dev                     # HDF5 arrays: Blosc chunks (filter 32001)
  libcjson-dev libexpat1-dev       # WebDataset .json labels and pack --coco (JSON); pack --voc (XML)
  libcurl4-openssl-dev             # s3:// and http(s):// datasets (remote/)
  libisal-dev                      # CRC-32C of TFRecord records (Intel ISA-L)
)
if [[ "$mode" != --build ]]; then
  packages+=(
  lmdb-utils hdf5-tools            # tests: mdb_stat; h5dump/h5ls
  libcmocka-dev                    # tests
  nginx openssl                    # test_remote: HTTP(S) on loopback, its certificate
  python3-lmdb python3-msgpack     # test_foreign's fixtures (py-lmdb)
  python3-dev                      # the Python module (CPython headers, libpython3-dev)
  python3-venv                     # scripts/test-venv.sh: the tests' PyPI packages (and the wheel's test)
  python3-numpy python3-pytest     # the Python module's tests
  python3-h5py python3-pil         # test_h5array's fixtures (h5py, /usr/bin/python3)
  python3-tables                   # test_h5array's Blosc fixtures (PyTables, /usr/bin/python3)
  python3-protobuf python3-crc32c  # the tfrecord package's needs (test_records' fixtures)
  )
fi
if [[ "$mode" == --extra ]]; then
  packages+=(clang libclang-rt-14-dev   # libFuzzer, sanitizers with clang
             clang-format-14            # scripts/format.sh --check
             valgrind                   # tests/valgrind.sh (CI: the fast tests)
             libopenmpi-dev openmpi-bin # the MPI sharding example and its test
             python3-matplotlib         # bench plots
             python3-torch              # the Python module's torch tests (CPU)
             python3-torchvision        # the recipe ops' reference (test_augment.py)
             openjdk-17-jre-headless)   # tests/dist/run.sh: PySpark local[2] (Ray and PySpark in its venv)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -eq 0 ]]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "deps: missing Debian packages; run as root:" >&2
  echo "  apt-get install -y ${missing[*]}" >&2
  exit 1
fi
