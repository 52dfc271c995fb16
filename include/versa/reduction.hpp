#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "versa/cuda_fwd.hpp"
#include "versa/detail/cuda_backend.hpp"
#include "versa/view.hpp"

namespace versa {

namespace detail {

// A reduction operator with its element type erased; built by Reduction<T>. Counts are in
// elements; every buffer is dense.
struct ReductionOps {
  std::string name;
  const std::type_info* element_type = nullptr;
  std::size_t element_size = 0;
  std::function<void(void* data, std::size_t count)> identity;
  std::function<void(void* into, const void* from, std::size_t count)> merge;
  // Empty: apply with `merge`.
  std::function<void(void* destination, const void* partial, std::size_t count)> apply;
  std::function<void(CudaContext& context, void* data, std::size_t count)> cuda_identity;
  std::function<void(CudaContext& context, void* into, const void* from, std::size_t count)>
      cuda_merge;

  bool runs_on_cuda() const { return cuda_identity && cuda_merge; }
};

// Sum kernels of the CUDA backend (src/cuda/reduction_kernels.cu), queued on context.stream().
// Defined only with the backend: without it sum() drops the functions that call them, like any
// Reduction::cuda_identity/cuda_merge.
void cuda_fill_zero(CudaContext& context, void* data, std::size_t bytes);
void cuda_add(CudaContext& context, double* into, const double* from, std::size_t count);
void cuda_add(CudaContext& context, float* into, const float* from, std::size_t count);
void cuda_add(CudaContext& context, int* into, const int* from, std::size_t count);

}  // namespace detail

// How the `add` accesses to a handle combine (DESIGN.md section 4): an `add` task that cannot
// have the handle to itself writes into a private partial buffer, which the runtime first fills
// with the identity; partials are merged pairwise where they lie, and the result is applied to
// the handle's data before the next access that is not an `add`.
//
//   identity(f)       f(Span<T> partial) fills a partial with the identity.
//   merge(f)          f(Span<T> into, Span<const T> from) combines `from` into `into`.
//   apply(f)          f(Span<T> destination, Span<const T> partial) combines a merged partial
//                     into the handle's data; by default the merge function.
//   cuda_identity(f), cuda_merge(f)
//                     the same on a GPU: f(CudaContext&, ...) queues its work on
//                     context.stream(). Needed when tasks that add into the handle may run on
//                     a GPU. The emulated accelerator uses the CPU functions. Like
//                     TaskType::cuda, dropped unseen in a build without the CUDA backend, so
//                     they need no #if.
// The functions must be safe to call from several threads at once on different buffers.
// Bind an operator to a handle (Handle::set_reduction) or to a task type
// (TaskType::reduction); versa::sum<T>() is the usual one.
//
//   auto max_of = versa::Reduction<double>("max")
//       .identity([](versa::Span<double> p) { std::ranges::fill(p, -HUGE_VAL); })
//       .merge([](versa::Span<double> a, versa::Span<const double> b) {
//         for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]); });
template <class T>
class Reduction {
 public:
  explicit Reduction(std::string name) : ops_(std::make_shared<detail::ReductionOps>()) {
    ops_->name = std::move(name);
    ops_->element_type = &typeid(T);
    ops_->element_size = sizeof(T);
  }

  template <class F>
  Reduction identity(F f) const {
    return with([f = std::move(f)](detail::ReductionOps& ops) {
      ops.identity = [f](void* data, std::size_t count) {
        f(Span<T>(static_cast<T*>(data), count));
      };
    });
  }
  template <class F>
  Reduction merge(F f) const {
    return with([f = std::move(f)](detail::ReductionOps& ops) { ops.merge = pairwise(f); });
  }
  template <class F>
  Reduction apply(F f) const {
    return with([f = std::move(f)](detail::ReductionOps& ops) { ops.apply = pairwise(f); });
  }
  template <class F>
  Reduction cuda_identity(F f) const {
    if constexpr (!detail::cuda_backend) {
      (void)f;
      return *this;
    } else {
      return with([f = std::move(f)](detail::ReductionOps& ops) {
        ops.cuda_identity = [f](CudaContext& context, void* data, std::size_t count) {
          f(context, Span<T>(static_cast<T*>(data), count));
        };
      });
    }
  }
  template <class F>
  Reduction cuda_merge(F f) const {
    if constexpr (!detail::cuda_backend) {
      (void)f;
      return *this;
    } else {
      return with([f = std::move(f)](detail::ReductionOps& ops) {
        ops.cuda_merge = [f](CudaContext& context, void* into, const void* from,
                             std::size_t count) {
          f(context, Span<T>(static_cast<T*>(into), count),
            Span<const T>(static_cast<const T*>(from), count));
        };
      });
    }
  }

  const std::string& name() const { return ops_->name; }
  // Shared by every copy; compared by identity when a handle is bound twice.
  const std::shared_ptr<const detail::ReductionOps>& ops() const { return const_ops_; }

 private:
  template <class F>
  static auto pairwise(F f) {
    return [f](void* into, const void* from, std::size_t count) {
      f(Span<T>(static_cast<T*>(into), count), Span<const T>(static_cast<const T*>(from), count));
    };
  }
  template <class Change>
  Reduction with(Change change) const {
    Reduction copy(*this);
    auto ops = std::make_shared<detail::ReductionOps>(*ops_);
    change(*ops);
    copy.ops_ = ops;
    copy.const_ops_ = ops;
    return copy;
  }

  std::shared_ptr<detail::ReductionOps> ops_;
  std::shared_ptr<const detail::ReductionOps> const_ops_ = ops_;
};

// The element-wise sum: identity 0, merge and apply `+=`. On GPUs for double, float and int.
// Every call returns the same operator.
template <class T>
requires std::is_arithmetic_v<T>
const Reduction<T>& sum() {
  static const Reduction<T> op = [] {
    auto r = Reduction<T>("sum")
                 .identity([](Span<T> p) {
                   for (T& x : p) x = T(0);
                 })
                 .merge([](Span<T> into, Span<const T> from) {
                   for (std::size_t i = 0; i < into.size(); ++i) into[i] += from[i];
                 });
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, int>) {
      r = r.cuda_identity([](CudaContext& context, Span<T> p) {
             detail::cuda_fill_zero(context, p.data(), p.size() * sizeof(T));
           }).cuda_merge([](CudaContext& context, Span<T> into, Span<const T> from) {
        detail::cuda_add(context, into.data(), from.data(), into.size());
      });
    }
    return r;
  }();
  return op;
}

}  // namespace versa
