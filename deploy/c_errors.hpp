#pragma once
// The C API's per-thread last error (tunedb_cuda_last_error): a fixed buffer, so that a refused
// launch on the hot path does not allocate either.
namespace tunedb::cuda::c_api {

// Formats the message (printf-style) into this thread's buffer; returns `code`.
int fail(int code, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));
// Maps the exception in flight to a TUNEDB_CUDA_* code and its message.
int fail_current() noexcept;
// Success: clears the message; returns TUNEDB_CUDA_OK.
int succeed() noexcept;
const char* last_error() noexcept;

}  // namespace tunedb::cuda::c_api
