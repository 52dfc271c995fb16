#include "distributions.hpp"

#include <cmath>
#include <stdexcept>

namespace fmm {

Distribution parse_distribution(const std::string& name) {
  if (name == "uniform") return Distribution::uniform;
  if (name == "blobs") return Distribution::blobs;
  if (name == "sphere") return Distribution::sphere;
  throw std::invalid_argument("unknown distribution '" + name +
                              "' (expected uniform, blobs or sphere)");
}

const char* to_string(Distribution distribution) {
  switch (distribution) {
    case Distribution::uniform:
      return "uniform";
    case Distribution::blobs:
      return "blobs";
    case Distribution::sphere:
      return "sphere";
  }
  return "?";
}

void add_point(Points& points, double x, double y, double z, std::mt19937_64& random) {
  points.x.push_back(x), points.y.push_back(y), points.z.push_back(z);
  points.charge.push_back(std::uniform_real_distribution<double>(-1, 1)(random));
}

namespace {

Points uniform_points(std::size_t n, std::mt19937_64& random) {
  std::uniform_real_distribution<double> u(0, 1);
  Points p;
  for (std::size_t i = 0; i < n; ++i) add_point(p, u(random), u(random), u(random), random);
  return p;
}

// Blob i % 8 holds point i, so every blob has about n / 8 points whatever n.
Points blob_points(std::size_t n, std::mt19937_64& random) {
  std::uniform_real_distribution<double> u(0, 1);
  const double widths[8] = {1e-3, 2e-3, 4e-3, 6e-3, 1e-2, 1.5e-2, 2e-2, 3e-2};
  double centers[8][3];
  for (auto& c : centers) c[0] = u(random), c[1] = u(random), c[2] = u(random);
  Points p;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = i % 8;
    std::normal_distribution<double> g(0, widths[b]);
    add_point(p, centers[b][0] + g(random), centers[b][1] + g(random), centers[b][2] + g(random),
              random);
  }
  return p;
}

// A normalised Gaussian vector is uniform on the sphere.
Points sphere_points(std::size_t n, std::mt19937_64& random) {
  std::normal_distribution<double> g(0, 1);
  Points p;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = g(random), y = g(random), z = g(random);
    const double r = std::sqrt(x * x + y * y + z * z);
    add_point(p, x / r, y / r, z / r, random);
  }
  return p;
}

}  // namespace

Points make_points(Distribution distribution, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  switch (distribution) {
    case Distribution::uniform:
      return uniform_points(n, random);
    case Distribution::blobs:
      return blob_points(n, random);
    case Distribution::sphere:
      return sphere_points(n, random);
  }
  throw std::invalid_argument("make_points: unknown distribution");
}

}  // namespace fmm
