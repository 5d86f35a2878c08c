#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) in build-fuzz/ and fuzzes
# probe + decode + augment for SECONDS (default 30), then the Caffe Datum
# parser and the pickle/msgpack value readers for DATUM_SECONDS (default
# 10) each, then the LMDB structural check,
# the INI config parser, the JPEG restart-layout rewriter and window
# builder, pack's EXIF readers, the HDF5 index checks, the HDF5 chunk index
# parser, the HDF5 chunk filters, the copy of a row of chunks into place,
# the box chunk parser with its LMDB reader, pack's COCO/VOC annotation
# readers, the WebDataset tar walker (with the .npy header parser), the
# TFRecord Example parser, the RecordIO framing and IRHeader, its .idx
# lines, the image
# folder's list lines, the image folder walk, the sharded dataset's index
# and the sidecar index of foreign shards at URLs for
# PARSER_SECONDS each (default 8), each starting from its committed seed
# corpus (fuzz/corpus, fuzz/corpus_datum, fuzz/corpus_pickle,
# fuzz/corpus_lmdb, fuzz/corpus_config, fuzz/corpus_jpeg, fuzz/corpus_exif,
# fuzz/corpus_hdf5, fuzz/corpus_h5chunk, fuzz/corpus_h5filter,
# fuzz/corpus_h5tiles, fuzz/corpus_boxes, fuzz/corpus_pack_detect,
# fuzz/corpus_tar, fuzz/corpus_example, fuzz/corpus_recordio,
# fuzz/corpus_recio_idx,
# fuzz/corpus_image_list, fuzz/corpus_folder, fuzz/corpus_shard_index,
# fuzz/corpus_url, fuzz/corpus_sidecar). New inputs go to
# build-fuzz/corpus*; a crash leaves crash-* in build-fuzz/ and exits
# non-zero.
#   fuzz/run.sh [SECONDS [DATUM_SECONDS [PARSER_SECONDS]]]
set -euo pipefail
secs=${1:-30}
datum_secs=${2:-10}
parser_secs=${3:-8}
cd "$(dirname "$0")/.."
if ! command -v clang >/dev/null; then
  echo "fuzz/run.sh: clang not found: apt-get install clang libclang-rt-14-dev" >&2
  exit 1
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DSLUICE_FUZZ=ON \
  -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_BENCH=OFF -DSLUICE_BUILD_EXAMPLES=OFF \
  -DSLUICE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build-fuzz fuzz_pipeline fuzz_datum fuzz_pickle fuzz_lmdb_check fuzz_config \
  fuzz_jpeg_layout fuzz_exif fuzz_hdf5_index fuzz_h5chunk fuzz_h5filter \
  fuzz_h5tiles fuzz_boxes fuzz_pack_detect fuzz_tar fuzz_example fuzz_recordio \
  fuzz_recio_idx fuzz_image_list fuzz_folder fuzz_shard_index fuzz_url fuzz_sidecar
cd build-fuzz
# fuzz TARGET SECONDS MAX_LEN CORPUS: new inputs go to build-fuzz/CORPUS,
# the seeds are fuzz/CORPUS.
fuzz() {
  mkdir -p "$4"
  ASAN_OPTIONS=detect_leaks=1 "./fuzz/$1" -max_total_time="$2" -max_len="$3" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$4" "../fuzz/$4"
}
fuzz fuzz_pipeline "$secs" 16384 corpus
fuzz fuzz_datum "$datum_secs" 4096 corpus_datum
# The first byte of a value input picks pickle or msgpack (fuzz_pickle.c).
fuzz fuzz_pickle "$datum_secs" 4096 corpus_pickle
# The first byte of an LMDB input picks the mode (fuzz/fuzz_lmdb_check.c).
fuzz fuzz_lmdb_check "$parser_secs" 16384 corpus_lmdb
fuzz fuzz_config "$parser_secs" 4096 corpus_config
fuzz fuzz_jpeg_layout "$parser_secs" 16384 corpus_jpeg
fuzz fuzz_exif "$parser_secs" 4096 corpus_exif
# Writes one small HDF5 file per input (under TMPDIR): ~100 inputs/s.
fuzz fuzz_hdf5_index "$parser_secs" 2048 corpus_hdf5
fuzz fuzz_h5chunk "$parser_secs" 32768 corpus_h5chunk
fuzz fuzz_h5filter "$parser_secs" 16384 corpus_h5filter
fuzz fuzz_h5tiles "$parser_secs" 16384 corpus_h5tiles
# Odd first byte: writes one small LMDB file per input (under TMPDIR).
fuzz fuzz_boxes "$parser_secs" 8192 corpus_boxes
# Writes the input as a COCO JSON or a VOC XML (under TMPDIR).
fuzz fuzz_pack_detect "$parser_secs" 8192 corpus_pack_detect
fuzz fuzz_tar "$parser_secs" 16384 corpus_tar
fuzz fuzz_example "$parser_secs" 16384 corpus_example
fuzz fuzz_recordio "$parser_secs" 16384 corpus_recordio
fuzz fuzz_recio_idx "$parser_secs" 4096 corpus_recio_idx
fuzz fuzz_image_list "$parser_secs" 4096 corpus_image_list
# Builds a directory tree per input (under TMPDIR) and removes it.
fuzz fuzz_folder "$parser_secs" 4096 corpus_folder
# A URL, an endpoint, a region and a name, NUL-separated (fuzz_url.c).
fuzz fuzz_url "$parser_secs" 4096 corpus_url
# Odd first byte: the harness makes the header and checksum good.
fuzz fuzz_shard_index "$parser_secs" 16384 corpus_shard_index
# Odd first byte: the harness makes the sizes add up and the checksum good.
fuzz fuzz_sidecar "$parser_secs" 16384 corpus_sidecar
