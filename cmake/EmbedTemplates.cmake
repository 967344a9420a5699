# Embeds the device-side sources under templates/ into the binary, so that NVRTC gets them from
# memory on any machine (the GPU machine included) and the cubin cache key can hash exactly the
# text that is compiled.
function(tuner_embed_templates out_cpp)
  file(GLOB_RECURSE template_files CONFIGURE_DEPENDS
       "${PROJECT_SOURCE_DIR}/templates/*.cuh" "${PROJECT_SOURCE_DIR}/templates/*.h")
  list(SORT template_files)
  add_custom_command(
    OUTPUT "${out_cpp}"
    COMMAND "${CMAKE_COMMAND}" -DOUT=${out_cpp} -DROOT=${PROJECT_SOURCE_DIR}/templates
            "-DFILES=${template_files}" -P "${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake"
    DEPENDS ${template_files} "${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake"
    COMMENT "Embedding device templates"
    VERBATIM)
endfunction()
