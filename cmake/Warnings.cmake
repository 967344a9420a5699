# Project-wide warning flags, attached to every target through an INTERFACE library.
add_library(tuner_warnings INTERFACE)
target_compile_options(tuner_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)

# AddressSanitizer + UndefinedBehaviorSanitizer for every target (scripts/sanitize.sh builds the
# CPU test suite this way in a separate build directory).
option(TUNER_SANITIZE "Build with -fsanitize=address,undefined" OFF)
if(TUNER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  # --as-needed: without it the sanitizer link keeps the CUDA driver stub as a dependency, and
  # nothing would start on a machine without a GPU driver (the driver is loaded at run time).
  add_link_options(-fsanitize=address,undefined -Wl,--as-needed)
endif()
