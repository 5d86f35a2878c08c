# Installs the header, the library, the CLI, a CMake package and sluice.pc.
include(CMakePackageConfigHelpers)

# The static library's private dependencies must reach the consumer's link line.
set(SLUICE_PC_REQUIRES_PRIVATE "lmdb hdf5-serial libjpeg libturbojpeg libpng libwebp inih liburing zlib blosc libcjson libisal")
set(SLUICE_PC_LIBS_PRIVATE "-lyuv -llzf -lpthread -lm")

install(TARGETS sluice EXPORT sluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT sluiceTargets NAMESPACE sluice::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)

configure_package_config_file(cmake/sluiceConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sluiceConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/sluiceConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)

file(RELATIVE_PATH SLUICE_PC_REL_INCLUDEDIR
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix/${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(cmake/sluice.pc.in ${CMAKE_CURRENT_BINARY_DIR}/sluice.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sluice.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
