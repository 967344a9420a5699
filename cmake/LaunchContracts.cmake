# Each family's launch contract: a fingerprint of what a frozen cubin and the serving launcher
# must agree on, so that libtunedb_cuda refuses cubins frozen for another parameter layout instead
# of launching them (core/launch_contract.hpp). The files: the headers the family's host code
# shares with its kernels (templates/<family>/*.h: parameter blocks, layout, schedule) and what
# the serving library compiles of the family (kernels/<family>/deploy.* and serve*). Generated at
# build time into one .cpp that both the tuner (freeze writes the value) and libtunedb_cuda (open
# checks it) compile; any edit to those files changes it.
function(tuner_launch_contract_files family out_list)
  file(GLOB files "${PROJECT_SOURCE_DIR}/templates/${family}/*.h"
       "${PROJECT_SOURCE_DIR}/kernels/${family}/deploy.*" "${PROJECT_SOURCE_DIR}/kernels/${family}/serve*")
  set(${out_list} ${files} PARENT_SCOPE)
endfunction()

function(tuner_launch_contracts out_cpp)
  file(GLOB family_dirs LIST_DIRECTORIES true "${PROJECT_SOURCE_DIR}/kernels/*")
  set(families "")
  set(inputs "")
  foreach(dir IN LISTS family_dirs)
    get_filename_component(family "${dir}" NAME)
    if(IS_DIRECTORY "${dir}" AND EXISTS "${dir}/serve.cpp")
      list(APPEND families "${family}")
      tuner_launch_contract_files("${family}" files)
      list(APPEND inputs ${files})
    endif()
  endforeach()
  # CONFIGURE_DEPENDS on the globs: a new header or family re-runs CMake and this list.
  file(GLOB _watch CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/templates/*/*.h"
       "${PROJECT_SOURCE_DIR}/kernels/*/deploy.*" "${PROJECT_SOURCE_DIR}/kernels/*/serve*")
  add_custom_command(
    OUTPUT "${out_cpp}"
    COMMAND "${CMAKE_COMMAND}" -DOUT=${out_cpp} -DROOT=${PROJECT_SOURCE_DIR} "-DFAMILIES=${families}"
            -P "${PROJECT_SOURCE_DIR}/cmake/launch_contracts_script.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/launch_contracts_script.cmake"
            "${PROJECT_SOURCE_DIR}/cmake/LaunchContracts.cmake"
    COMMENT "Fingerprinting the families' launch contracts"
    VERBATIM)
endfunction()
