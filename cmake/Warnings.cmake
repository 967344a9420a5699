# Project-wide warning flags, attached to every target through an INTERFACE library.
add_library(tuner_warnings INTERFACE)
target_compile_options(tuner_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
