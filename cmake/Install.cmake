# `cmake --install`: the tuner CLI, libtunedb and libtunedb_cuda (shared, versioned SONAME), their
# public headers under include/tunedb/ (repository-relative paths, so `#include
# "deploy/launcher.hpp"` reads the same in the tree and installed), the CMake package
# (find_package(tunedb CONFIG): tunedb::tunedb, tunedb::cuda) and tunedb.pc / tunedb_cuda.pc.
include(CMakePackageConfigHelpers)

install(TARGETS tuner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tunedb tunedb_cuda EXPORT tunedbTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunedb)
set(tunedb_header_root "${CMAKE_INSTALL_INCLUDEDIR}/tunedb")
# Each family's serving headers come from its own folder: its argument record (serve_args.h) and
# the typed wrapper over the C API (client.h).
file(GLOB family_serving_headers RELATIVE "${PROJECT_SOURCE_DIR}" CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/kernels/*/serve_args.h" "${PROJECT_SOURCE_DIR}/kernels/*/client.h")
foreach(header IN ITEMS db/tunedb/tunedb.h db/tunedb/tunedb.hpp db/sqlite/error.hpp
                        deploy/tunedb_cuda.h deploy/launcher.hpp core/deploy_family.hpp
                        core/launch_order.hpp core/cluster_capacity.hpp
                        ${family_serving_headers})
  get_filename_component(header_dir "${header}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/${header}" DESTINATION "${tunedb_header_root}/${header_dir}")
endforeach()

set(tunedb_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/tunedb")
install(EXPORT tunedbTargets NAMESPACE tunedb:: DESTINATION "${tunedb_cmake_dir}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/tunedbConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tunedbConfig.cmake" INSTALL_DESTINATION "${tunedb_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tunedbConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tunedbConfig.cmake"
        "${PROJECT_BINARY_DIR}/tunedbConfigVersion.cmake" DESTINATION "${tunedb_cmake_dir}")

foreach(pc IN ITEMS tunedb tunedb_cuda)
  configure_file("${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in" "${PROJECT_BINARY_DIR}/${pc}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/${pc}.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endforeach()
