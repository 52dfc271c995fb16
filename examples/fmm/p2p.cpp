// The P2P kernels (p2p.hpp), compiled once per instruction set by Highway's foreach_target.h,
// which includes this file again for each target; HWY_DYNAMIC_DISPATCH picks the best one the
// CPU runs on the first call.
#include "p2p.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "p2p.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace fmm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 1/sqrt(r2) to double precision, and 0 where r2 is 0. The single-precision estimate (12 bits
// on x86) costs a conversion each way instead of a double division and square root, which
// take 4 to 16 times the cycles of a multiply; one step of the series
//   y (1 - e)^(-1/2) = y (1 + e/2 + 3e^2/8 + 5e^3/16 + 35e^4/128 + O(e^5)), e = 1 - r2 y^2,
// then leaves a relative error of about (2^-11)^5, below double rounding. Float's range ends
// near 1e+-38: a vector with an r2 outside [1e-36, 1e36] (coincident points, or distances no
// point set of the method has) takes the exact division instead.
template <class D, class V>
HWY_INLINE V inverse_distance(D d, V r2) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128 || !HWY_ARCH_X86
  // The one step needs x86's 12-bit estimate. Without SIMD instructions the estimate is a bit
  // trick of 1e-3 relative error, and Arm's has 8 bits: the exact division instead, until a
  // second step there is written and measured.
  return hn::IfThenElseZero(hn::Gt(r2, hn::Zero(d)), hn::Div(hn::Set(d, 1.0), hn::Sqrt(r2)));
#else
  const hn::Rebind<float, D> df;
  const V low = hn::Set(d, 1e-36), high = hn::Set(d, 1e36);
  const auto in_range = hn::And(hn::Gt(r2, low), hn::Lt(r2, high));
  if (HWY_UNLIKELY(!hn::AllTrue(d, in_range))) {
    const V exact = hn::Div(hn::Set(d, 1.0), hn::Sqrt(r2));
    return hn::IfThenElseZero(hn::Gt(r2, hn::Zero(d)), exact);
  }
  const V y = hn::PromoteTo(d, hn::ApproximateReciprocalSqrt(hn::DemoteTo(df, r2)));
  // r2 y y with one rounding, in r2 y: e is exact to about 2^-53.
  const V e = hn::NegMulAdd(hn::Mul(r2, y), y, hn::Set(d, 1.0));
  V series = hn::MulAdd(e, hn::Set(d, 35.0 / 128), hn::Set(d, 5.0 / 16));
  series = hn::MulAdd(e, series, hn::Set(d, 3.0 / 8));
  series = hn::MulAdd(e, series, hn::Set(d, 0.5));
  return hn::MulAdd(hn::Mul(y, e), series, y);
#endif
}

// The points of a source leaf and what they receive, copied into arrays of `lanes` - 1 more
// entries of no charge, so that every load and store of the loop over the sources is a whole
// vector: Highway's masked store on targets before AVX2 writes the whole vector back, beyond
// the leaf's end. The copy costs one pass over the leaf against a pass per target point.
class PaddedSources {
 public:
  PaddedSources(const LeafPoints& b, std::size_t lanes) : count_(b.count) {
    const std::size_t padded = b.count + lanes - 1;
    thread_local std::vector<double> storage;
    storage.assign(8 * padded, 0.0);
    for (std::size_t k = 0; k < 8; ++k) arrays_[k] = storage.data() + k * padded;
    std::copy_n(b.x, b.count, arrays_[0]);
    std::copy_n(b.y, b.count, arrays_[1]);
    std::copy_n(b.z, b.count, arrays_[2]);
    std::copy_n(b.charge, b.count, arrays_[3]);
  }
  const double* x() const { return arrays_[0]; }
  const double* y() const { return arrays_[1]; }
  const double* z() const { return arrays_[2]; }
  const double* charge() const { return arrays_[3]; }
  double* potential() const { return arrays_[4]; }
  double* gx() const { return arrays_[5]; }
  double* gy() const { return arrays_[6]; }
  double* gz() const { return arrays_[7]; }
  // Adds what the sources received to `r`.
  void add_to(const LeafResults& r) const {
    double* const out[4] = {r.potential, r.gx, r.gy, r.gz};
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t j = 0; j < count_; ++j) out[k][j] += arrays_[4 + k][j];
  }

 private:
  std::size_t count_;
  double* arrays_[8];
};

// One target point (its coordinates and charge broadcast) against the sources j to j + lanes:
// the target's sums gain what it receives, the sources what they receive.
template <class D, class V>
HWY_INLINE void interact(D d, V xi, V yi, V zi, V qi, const PaddedSources& b, std::size_t j,
                         V& potential, V& gx, V& gy, V& gz) {
  auto add_to = [&](double* p, V value) {
    hn::StoreU(hn::Add(hn::LoadU(d, p + j), value), d, p + j);
  };
  const V dx = hn::Sub(xi, hn::LoadU(d, b.x() + j));
  const V dy = hn::Sub(yi, hn::LoadU(d, b.y() + j));
  const V dz = hn::Sub(zi, hn::LoadU(d, b.z() + j));
  const V r2 = hn::MulAdd(dz, dz, hn::MulAdd(dy, dy, hn::Mul(dx, dx)));
  const V inverse_r = inverse_distance(d, r2);
  const V inverse_r3 = hn::Mul(hn::Mul(inverse_r, inverse_r), inverse_r);
  const V qj = hn::LoadU(d, b.charge() + j);
  potential = hn::MulAdd(qj, inverse_r, potential);
  const V qj_r3 = hn::Mul(qj, inverse_r3);
  gx = hn::NegMulAdd(qj_r3, dx, gx);
  gy = hn::NegMulAdd(qj_r3, dy, gy);
  gz = hn::NegMulAdd(qj_r3, dz, gz);
  const V qi_r3 = hn::Mul(qi, inverse_r3);
  add_to(b.potential(), hn::Mul(qi, inverse_r));
  add_to(b.gx(), hn::Mul(qi_r3, dx));
  add_to(b.gy(), hn::Mul(qi_r3, dy));
  add_to(b.gz(), hn::Mul(qi_r3, dz));
}

// Each point i of `a` against the points of `b` in lanes: all of them, or with `triangle` (a
// and b one leaf) those after i, so that each pair is taken once.
void mutual(const LeafPoints& a, const LeafResults& ra, const LeafPoints& b, const LeafResults& rb,
            bool triangle) {
  const hn::ScalableTag<double> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t lanes = hn::Lanes(d);
  const PaddedSources sources(b, lanes);
  for (std::size_t i = 0; i < a.count; ++i) {
    const V xi = hn::Set(d, a.x[i]), yi = hn::Set(d, a.y[i]), zi = hn::Set(d, a.z[i]);
    const V qi = hn::Set(d, a.charge[i]);
    V potential = hn::Zero(d), gx = hn::Zero(d), gy = hn::Zero(d), gz = hn::Zero(d);
    for (std::size_t j = triangle ? i + 1 : 0; j < b.count; j += lanes)
      interact(d, xi, yi, zi, qi, sources, j, potential, gx, gy, gz);
    ra.potential[i] += hn::GetLane(hn::SumOfLanes(d, potential));
    ra.gx[i] += hn::GetLane(hn::SumOfLanes(d, gx));
    ra.gy[i] += hn::GetLane(hn::SumOfLanes(d, gy));
    ra.gz[i] += hn::GetLane(hn::SumOfLanes(d, gz));
  }
  sources.add_to(rb);
}

void mutual_pair(const LeafPoints& a, const LeafResults& ra, const LeafPoints& b,
                 const LeafResults& rb) {
  mutual(a, ra, b, rb, false);
}

void mutual_self(const LeafPoints& a, const LeafResults& r) { mutual(a, r, a, r, true); }

}  // namespace HWY_NAMESPACE
}  // namespace fmm
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fmm {

HWY_EXPORT(mutual_pair);
HWY_EXPORT(mutual_self);

void p2p_mutual(const LeafPoints& a, const LeafResults& ra, const LeafPoints& b,
                const LeafResults& rb) {
  HWY_DYNAMIC_DISPATCH(mutual_pair)(a, ra, b, rb);
}

void p2p_self(const LeafPoints& a, const LeafResults& r) {
  HWY_DYNAMIC_DISPATCH(mutual_self)(a, r);
}

void p2p_reference(const LeafPoints& targets, const LeafResults& r, const LeafPoints& sources) {
  for (std::size_t i = 0; i < targets.count; ++i) {
    double potential = 0, gx = 0, gy = 0, gz = 0;
    for (std::size_t j = 0; j < sources.count; ++j) {
      const double dx = targets.x[i] - sources.x[j], dy = targets.y[i] - sources.y[j],
                   dz = targets.z[i] - sources.z[j];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 == 0) continue;
      const double inverse_r = 1 / std::sqrt(r2);
      const double q_r3 = sources.charge[j] * inverse_r * inverse_r * inverse_r;
      potential += sources.charge[j] * inverse_r;
      gx -= q_r3 * dx;
      gy -= q_r3 * dy;
      gz -= q_r3 * dz;
    }
    r.potential[i] += potential;
    r.gx[i] += gx;
    r.gy[i] += gy;
    r.gz[i] += gz;
  }
}

const char* p2p_target_name() {
  // The target the dispatch picks is the best of those compiled that the CPU supports.
  return p2p_target_name(p2p_supported_targets().front());
}

std::vector<std::int64_t> p2p_supported_targets() { return hwy::SupportedAndGeneratedTargets(); }

const char* p2p_target_name(std::int64_t target) { return hwy::TargetName(target); }

void p2p_restrict_to_target(std::int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

}  // namespace fmm
#endif  // HWY_ONCE
