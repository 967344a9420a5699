// Stream (non-blocking) and Event (the timing events recorded on streams).
#include <string>
#include <utility>

#include "core/cuda_driver.hpp"
#include "core/cuda_driver_api.hpp"

namespace tuner::cuda {
namespace {

void destroy_stream(CUstream stream) noexcept {
  if (stream != nullptr) {
    warn_if_failed(driver().api.stream_destroy(stream), "cuStreamDestroy", "stream");
  }
}

void destroy_event(CUevent event) noexcept {
  if (event != nullptr) {
    warn_if_failed(driver().api.event_destroy(event), "cuEventDestroy", "event");
  }
}

}  // namespace

Stream::Stream() {
  check(api().stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
        "non-blocking stream");
}

Stream::~Stream() { destroy_stream(stream_); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy_stream(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize(const std::string& context) const {
  check(api().stream_synchronize(stream_), "cuStreamSynchronize", context);
}

bool Stream::is_capturing() const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(api().stream_is_capturing(stream_, &status), "cuStreamIsCapturing", "stream");
  // An invalidated capture is still open until cuStreamEndCapture.
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Event::Event() {
  check(api().event_create(&event_, CU_EVENT_DEFAULT), "cuEventCreate", "timing event");
}

Event::~Event() { destroy_event(event_); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy_event(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) const {
  check(api().event_record(event_, stream), "cuEventRecord", "timing event");
}

void Event::record_in_capture(CUstream stream) const {
  check(api().event_record_with_flags(event_, stream, CU_EVENT_RECORD_EXTERNAL),
        "cuEventRecordWithFlags",
        "timing event node (CU_EVENT_RECORD_EXTERNAL) in a graph capture");
}

void Event::synchronize() const {
  check(api().event_synchronize(event_), "cuEventSynchronize", "timing event");
}

float Event::elapsed_ms_since(const Event& start) const {
  float milliseconds = 0.0F;
  check(api().event_elapsed_time(&milliseconds, start.event_, event_), "cuEventElapsedTime",
        "timing event");
  return milliseconds;
}

}  // namespace tuner::cuda
