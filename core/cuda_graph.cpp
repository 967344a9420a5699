// Graphs captured from a stream (begin_capture ... end_capture), instantiated and launched.
#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {
namespace {

void destroy_graph(CUgraph graph) noexcept {
  if (graph != nullptr) {
    warn_if_failed(driver().api.graph_destroy(graph), "cuGraphDestroy", "graph");
  }
}

void destroy_graph_exec(CUgraphExec exec) noexcept {
  if (exec != nullptr) {
    warn_if_failed(driver().api.graph_exec_destroy(exec), "cuGraphExecDestroy", "graph exec");
  }
}

}  // namespace

Graph::~Graph() { destroy_graph(graph_); }

Graph::Graph(Graph&& other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    destroy_graph(graph_);
    graph_ = std::exchange(other.graph_, nullptr);
  }
  return *this;
}

GraphExec Graph::instantiate(const std::string& context) const {
  CUgraphExec exec = nullptr;
  check(api().graph_instantiate(&exec, graph_, 0), "cuGraphInstantiateWithFlags", context);
  return GraphExec(exec);
}

GraphExec::~GraphExec() { destroy_graph_exec(exec_); }

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    destroy_graph_exec(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void GraphExec::launch(CUstream stream, const std::string& context) const {
  check(api().graph_launch(exec_, stream), "cuGraphLaunch", context);
}

void begin_capture(const Stream& stream, const std::string& context) {
  // Thread-local: other threads (compile workers) may keep calling the driver meanwhile.
  check(api().stream_begin_capture(stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture", context);
}

Graph end_capture(const Stream& stream, const std::string& context) {
  CUgraph graph = nullptr;
  check(api().stream_end_capture(stream.get(), &graph), "cuStreamEndCapture", context);
  return Graph(graph);
}

}  // namespace tuner::cuda
