#pragma once
// How a kernel launch orders after the work already on its stream.

namespace tuner {

enum class LaunchOrder {
  // The usual: the grid starts once the stream's previous work finished.
  stream,
  // Programmatic dependent launch (sm_90+): the grid may start once every CTA of the previous
  // kernel on the stream ran griddepcontrol.launch_dependents (or exited), so its launch and
  // prologue overlap that kernel's tail; it must run griddepcontrol.wait before reading what that
  // kernel wrote (templates/common/ptx.cuh). Captured into a graph, it becomes a programmatic edge.
  programmatic
};

}  // namespace tuner
