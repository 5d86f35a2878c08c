# Finds sluice's dependencies among Debian's -dev packages. A missing one stops
# configure with the apt-get line that installs it.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()
find_package(Threads REQUIRED)

# sluice_pkg(target module debian_package): IMPORTED target from pkg-config.
function(sluice_pkg target module debian_pkg)
  pkg_check_modules(${target} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR "sluice needs ${module} (pkg-config found no '${module}'): "
                        "apt-get install ${debian_pkg}")
  endif()
  add_library(sluice::dep::${target} ALIAS PkgConfig::${target})
  message(STATUS "sluice: ${module} ${${target}_VERSION}")
endfunction()

sluice_pkg(lmdb lmdb liblmdb-dev)
sluice_pkg(hdf5 hdf5-serial libhdf5-dev)
sluice_pkg(jpeg libjpeg libjpeg62-turbo-dev)
sluice_pkg(turbojpeg libturbojpeg libturbojpeg0-dev)
sluice_pkg(png libpng libpng-dev)
sluice_pkg(webp libwebp libwebp-dev)
sluice_pkg(inih inih libinih-dev)
sluice_pkg(uring liburing liburing-dev)
sluice_pkg(zlib zlib zlib1g-dev)
# Blosc 1 (blosclz, lz4, zlib, zstd codecs): the HDF5 filter 32001 PyTables
# and hdf5plugin write.
sluice_pkg(blosc blosc libblosc-dev)
# cJSON: a WebDataset sample's .json member (its label field), at open, and
# `sluice pack --coco`'s COCO JSON; libexpat: `pack --voc`'s Pascal VOC XML
# (the command only).
sluice_pkg(cjson libcjson libcjson-dev)
sluice_pkg(expat expat libexpat1-dev)
# libcurl: s3:// and http(s):// datasets (remote/), S3 signed by curl's
# CURLOPT_AWS_SIGV4 (7.75+).
sluice_pkg(curl libcurl libcurl4-openssl-dev)
# Intel's ISA-L: CRC-32C (crc32_iscsi) for TFRecord's record checksums.
sluice_pkg(isal libisal libisal-dev)

# Debian's liblzf ships neither a .pc file nor a CMake package.
find_path(LIBLZF_INCLUDE_DIR liblzf/lzf.h)
find_library(LIBLZF_LIBRARY NAMES lzf)
if(NOT LIBLZF_INCLUDE_DIR OR NOT LIBLZF_LIBRARY)
  message(FATAL_ERROR "sluice needs liblzf (liblzf/lzf.h / liblzf.so not found): apt-get install liblzf-dev")
endif()
add_library(sluice_dep_lzf INTERFACE)
target_include_directories(sluice_dep_lzf INTERFACE ${LIBLZF_INCLUDE_DIR})
target_link_libraries(sluice_dep_lzf INTERFACE ${LIBLZF_LIBRARY})
add_library(sluice::dep::lzf ALIAS sluice_dep_lzf)

# Debian's libyuv ships neither a .pc file nor a CMake package.
find_path(LIBYUV_INCLUDE_DIR libyuv.h)
find_library(LIBYUV_LIBRARY NAMES yuv)
if(NOT LIBYUV_INCLUDE_DIR OR NOT LIBYUV_LIBRARY)
  message(FATAL_ERROR "sluice needs libyuv (libyuv.h / libyuv.so not found): apt-get install libyuv-dev")
endif()
add_library(sluice_dep_yuv INTERFACE)
target_include_directories(sluice_dep_yuv INTERFACE ${LIBYUV_INCLUDE_DIR})
target_link_libraries(sluice_dep_yuv INTERFACE ${LIBYUV_LIBRARY})
add_library(sluice::dep::yuv ALIAS sluice_dep_yuv)

# Everything libsluice links, in one place (the stages link what they use).
add_library(sluice_deps INTERFACE)
target_link_libraries(sluice_deps INTERFACE sluice::dep::lmdb sluice::dep::hdf5
  sluice::dep::jpeg sluice::dep::turbojpeg sluice::dep::png sluice::dep::webp
  sluice::dep::inih
  sluice::dep::uring sluice::dep::zlib sluice::dep::lzf sluice::dep::blosc
  sluice::dep::cjson sluice::dep::isal sluice::dep::yuv sluice::dep::curl
  Threads::Threads m)

if(SLUICE_BUILD_TESTS)
  # Debian's cmocka 1.1.5 defines no CMake target.
  sluice_pkg(cmocka cmocka libcmocka-dev)
endif()

# CUDA: AUTO builds the CUDA backend when the toolkit is found.
set(SLUICE_HAVE_CUDA OFF)
set(SLUICE_CUDA_AS_PLUGIN OFF)
if(NOT SLUICE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  find_package(CUDAToolkit QUIET)
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
    # One shared cudart for libsluice, its tests and users' CUDA code.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    if(SLUICE_CUDA_PLUGIN)
      # libsluice links no CUDA; libsluice_cuda.so does (loader/cuda/cuda_plugin.h).
      set(SLUICE_CUDA_AS_PLUGIN ON)
      message(STATUS "sluice: CUDA backend as a plugin, loaded at run time (toolkit ${CUDAToolkit_VERSION})")
    else()
      set(SLUICE_HAVE_CUDA ON)
      message(STATUS "sluice: CUDA backend on (toolkit ${CUDAToolkit_VERSION})")
    endif()
  elseif(SLUICE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SLUICE_CUDA=ON but no CUDA toolkit was found (set CUDAToolkit_ROOT or install nvcc)")
  else()
    message(STATUS "sluice: CUDA toolkit not found, building the host backend only")
  endif()
endif()
if(SLUICE_HAVE_CUDA)
  target_link_libraries(sluice_deps INTERFACE CUDA::cudart)
endif()
