#include "cuda/sm_partition.hpp"

#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/current_device.hpp"

namespace versa::detail {

// The driver's entry points, of the ABI of the headers this file was compiled with.
struct SmPartition::DriverCalls {
  decltype(&cuGetErrorString) error_string = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetDevResource) device_resource = nullptr;
  decltype(&cuDevSmResourceSplitByCount) split_by_count = nullptr;
  decltype(&cuDevResourceGenerateDesc) generate_desc = nullptr;
  decltype(&cuGreenCtxCreate) create = nullptr;
  decltype(&cuGreenCtxDestroy) destroy = nullptr;
  decltype(&cuGreenCtxStreamCreate) stream_create = nullptr;

  DriverCalls() {
    fetch(error_string, "cuGetErrorString");
    fetch(device_get, "cuDeviceGet");
    fetch(device_resource, "cuDeviceGetDevResource");
    fetch(split_by_count, "cuDevSmResourceSplitByCount");
    fetch(generate_desc, "cuDevResourceGenerateDesc");
    fetch(create, "cuGreenCtxCreate");
    fetch(destroy, "cuGreenCtxDestroy");
    fetch(stream_create, "cuGreenCtxStreamCreate");
  }

  template <class Function>
  static void fetch(Function& function, const char* symbol) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &found);
    if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || address == nullptr)
      throw CudaError(std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")",
                      "this driver has no green contexts (CUDA 12.5 or later is needed for "
                      "Config::cuda_panel_sms)");
    function = reinterpret_cast<Function>(address);
  }

  void check(CUresult result, const char* call) const {
    if (result == CUDA_SUCCESS) return;
    const char* reason = nullptr;
    if (error_string(result, &reason) != CUDA_SUCCESS || reason == nullptr) reason = "unknown";
    throw CudaError(call, reason);
  }
};

SmPartition::SmPartition(int ordinal, int panel_sms) : calls_(std::make_unique<DriverCalls>()) {
  CurrentDeviceGuard guard(ordinal);
  throw_if_failed(guard.status(), "cudaSetDevice");
  // Green contexts retain the primary context: made active first, it is not created and torn
  // down again by each of them.
  throw_if_failed(cudaFree(nullptr), "cudaFree");
  CUdevice device = 0;
  calls_->check(calls_->device_get(&device, ordinal), "cuDeviceGet");
  CUdevResource all{};
  calls_->check(calls_->device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM),
                "cuDeviceGetDevResource");
  const std::string too_many = "GPU " + std::to_string(ordinal) + " has " +
                               std::to_string(all.sm.smCount) + " SMs: it cannot give " +
                               std::to_string(panel_sms) +
                               " to the panel (Config::cuda_panel_sms) and keep some for the "
                               "other streams";
  if (panel_sms <= 0 || static_cast<unsigned int>(panel_sms) >= all.sm.smCount)
    throw CudaError("SmPartition", too_many.c_str());
  CUdevResource panel{};
  CUdevResource others{};
  unsigned int groups = 1;
  calls_->check(calls_->split_by_count(&panel, &groups, &all, &others, 0,
                                       static_cast<unsigned int>(panel_sms)),
                "cuDevSmResourceSplitByCount");
  if (groups != 1 || others.sm.smCount == 0) throw CudaError("SmPartition", too_many.c_str());
  panel_sms_ = static_cast<int>(panel.sm.smCount);
  other_sms_ = static_cast<int>(others.sm.smCount);

  const auto create = [&](CUdevResource& resource, const char* call) {
    CUdevResourceDesc description = nullptr;
    calls_->check(calls_->generate_desc(&description, &resource, 1), "cuDevResourceGenerateDesc");
    CUgreenCtx context = nullptr;
    calls_->check(calls_->create(&context, description, device, CU_GREEN_CTX_DEFAULT_STREAM), call);
    return context;
  };
  panel_ = create(panel, "cuGreenCtxCreate (the panel's SMs)");
  try {
    others_ = create(others, "cuGreenCtxCreate (the other SMs)");
    check_events_on(panel_);
    check_events_on(others_);
  } catch (...) {
    if (others_ != nullptr) (void)calls_->destroy(others_);
    (void)calls_->destroy(panel_);
    throw;
  }
}

// The device times and orders its streams with events of the primary context (EventPool), and
// CUDA documents an event and the stream it is recorded on as belonging to one context. Drivers
// accept primary-context events on green-context streams, but should one refuse, every kernel
// would fail at run time: better to say so here, once, in words.
void SmPartition::check_events_on(CUgreenCtx context) const {
  CUstream stream = nullptr;
  calls_->check(calls_->stream_create(&stream, context, CU_STREAM_NON_BLOCKING, 0),
                "cuGreenCtxStreamCreate");
  cudaEvent_t event = nullptr;
  cudaError_t status = cudaEventCreate(&event);
  if (status == cudaSuccess) status = cudaEventRecord(event, stream);
  if (status == cudaSuccess) status = cudaEventSynchronize(event);
  if (event != nullptr) (void)cudaEventDestroy(event);
  (void)cudaStreamDestroy(stream);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw CudaError("SmPartition",
                    (std::string("this driver does not record the runtime's events on a green "
                                 "context's streams (") +
                     cudaGetErrorString(status) + "): Config::cuda_panel_sms cannot be used")
                        .c_str());
  }
}

SmPartition::~SmPartition() {
  (void)calls_->destroy(others_);
  (void)calls_->destroy(panel_);
}

cudaStream_t SmPartition::create_stream(bool panel, int priority) const {
  CUstream stream = nullptr;
  calls_->check(
      calls_->stream_create(&stream, panel ? panel_ : others_, CU_STREAM_NON_BLOCKING, priority),
      "cuGreenCtxStreamCreate");
  return stream;
}

}  // namespace versa::detail
