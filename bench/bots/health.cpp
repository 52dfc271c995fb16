#include "health.hpp"

#include <algorithm>
#include <stdexcept>

namespace bots {
namespace {

// Drops from `list` the patients for which `leaves` returns true (having put them in another
// list) and keeps the others in order: BOTS's walk that unlinks patients as it goes.
template <class Leaves>
void remove_leaving(PatientList& list, Leaves leaves) {
  auto kept = list.begin();
  for (Patient* patient : list)
    if (!leaves(*patient)) *kept++ = patient;
  list.erase(kept, list.end());
}

// BOTS's put_in_hosp: a patient checks in and is assessed at once if staff is free.
void check_in(const HealthParameters& parameters, Hospital& hospital, Patient& patient) {
  ++patient.hospitals_visited;
  if (hospital.free_personnel > 0) {
    --hospital.free_personnel;
    patient.time_left = parameters.assess_time;
    patient.time += parameters.assess_time;
    hospital.assess.push_back(&patient);
  } else {
    hospital.waiting.push_back(&patient);
  }
}

void build_village(const HealthParameters& parameters, int level, std::int32_t id,
                   HealthWorld& world, Village& village) {
  // The village's stream starts at its id times (127773 + the input's seed), wrapped to 32 bits.
  constexpr std::uint32_t schrage_q = 127773;
  village.level = level;
  const int personnel = 1 << level;
  village.hospital.personnel = personnel;
  village.hospital.free_personnel = personnel;
  auto seed = static_cast<std::int32_t>(static_cast<std::uint32_t>(id) *
                                        (schrage_q + static_cast<std::uint32_t>(parameters.seed)));
  const int population = personnel * parameters.population_ratio;
  village.population.reserve(static_cast<std::size_t>(population));
  for (int i = 0; i < population; ++i) {
    Patient& patient = world.patients.emplace_back();
    patient = {static_cast<std::int32_t>(world.patients.size() - 1), seed, 0, 0, 0};
    health_random(seed);
    village.population.push_back(&patient);
  }
  if (level == 1) return;
  // Children are visited first to last but created last to first, as in BOTS, which numbers
  // their patients in that order.
  village.children.resize(static_cast<std::size_t>(parameters.cities));
  for (int child = parameters.cities; child >= 1; --child)
    build_village(parameters, level - 1, id * parameters.cities + child, world,
                  village.children[static_cast<std::size_t>(child - 1)]);
}

void add_totals(const Village& village, HealthTotals& totals) {
  for (const Village& child : village.children) add_totals(child, totals);
  ++totals.hospitals;
  totals.personnel += village.hospital.personnel;
  const auto count = [&totals](const PatientList& list, std::int64_t& where) {
    where += static_cast<std::int64_t>(list.size());
    totals.patients += static_cast<std::int64_t>(list.size());
    for (const Patient* patient : list) {
      totals.checkins += patient->hospitals_visited;
      totals.time += patient->time;
    }
  };
  count(village.population, totals.at_home);
  count(village.hospital.waiting, totals.waiting);
  count(village.hospital.assess, totals.assessed);
  count(village.hospital.inside, totals.treated);
}

struct VersaSimulation {
  versa::Runtime* rt;
  const HealthParameters* parameters;
};

void simulate_village_versa(const VersaSimulation& simulation, Village& village) {
  const HealthParameters& parameters = *simulation.parameters;
  if (!health_children_as_tasks(parameters, village.level)) {
    simulate_village_sequential(parameters, village);
    return;
  }
  for (Village& child : village.children)
    simulation.rt->spawn("health",
                         [&simulation, &child] { simulate_village_versa(simulation, child); });
  treat_patients(parameters, village);
  simulation.rt->sync();
  admit_patients(parameters, village);
}

}  // namespace

bool HealthTotals::same_checked_totals(const HealthTotals& other) const {
  return hospitals == other.hospitals && personnel == other.personnel &&
         patients == other.patients && checkins == other.checkins && at_home == other.at_home &&
         waiting == other.waiting && assessed == other.assessed && treated == other.treated;
}

std::string HealthTotals::to_string() const {
  return "patients " + std::to_string(patients) + ", hospitals " + std::to_string(hospitals) +
         ", personnel " + std::to_string(personnel) + ", check-ins " + std::to_string(checkins) +
         ", at home " + std::to_string(at_home) + ", waiting " + std::to_string(waiting) +
         ", in assessment " + std::to_string(assessed) + ", in treatment " +
         std::to_string(treated);
}

HealthInput health_input(const std::string& name) {
  // The suite's inputs differ in the tree's shape only; their totals are those it checks.
  const auto make = [&name](int levels, int cities, HealthTotals expected) {
    return HealthInput{name,
                       HealthParameters{levels, cities, 10, 365, 2, 12, 23, 0.002f, 0.100f, 0.150f},
                       expected};
  };
  if (name == "test")
    return make(3, 18,
                {.hospitals = 343,
                 .personnel = 728,
                 .patients = 7280,
                 .checkins = 5531,
                 .at_home = 7160,
                 .waiting = 80,
                 .assessed = 26,
                 .treated = 14});
  if (name == "small")
    return make(4, 18,
                {.hospitals = 6175,
                 .personnel = 13120,
                 .patients = 131200,
                 .checkins = 96718,
                 .at_home = 128997,
                 .waiting = 1406,
                 .assessed = 525,
                 .treated = 272});
  if (name == "medium")
    return make(4, 36,
                {.hospitals = 47989,
                 .personnel = 98800,
                 .patients = 988000,
                 .checkins = 721934,
                 .at_home = 971855,
                 .waiting = 10249,
                 .assessed = 3901,
                 .treated = 1995});
  if (name == "large")
    return make(5, 24,
                {.hospitals = 346201,
                 .personnel = 723872,
                 .patients = 7238720,
                 .checkins = 5267413,
                 .at_home = 7121156,
                 .waiting = 73923,
                 .assessed = 28969,
                 .treated = 14672});
  throw std::invalid_argument("health: unknown input '" + name +
                              "' (expected test, small, medium or large)");
}

float health_random(std::int32_t& seed) {
  // Schrage's method for 16807 x mod (2^31 - 1) without overflow, on a scrambled 32-bit seed. The
  // next seed is the result times 2^31 - 1 wrapped to 32 bits, as the suite computes it (its
  // totals depend on it); unsigned arithmetic makes the wrap defined.
  constexpr std::int32_t multiplier = 16807;
  constexpr std::int32_t modulus = 2147483647;
  constexpr std::int32_t schrage_q = 127773;
  constexpr std::int32_t schrage_r = 2836;
  constexpr std::int32_t scramble = 123459876;
  std::int32_t value = seed ^ scramble;
  const std::int32_t k = value / schrage_q;
  value = multiplier * (value - k * schrage_q) - schrage_r * k;
  value ^= scramble;
  if (value < 0) value += modulus;
  seed = static_cast<std::int32_t>(static_cast<std::uint32_t>(value) *
                                   static_cast<std::uint32_t>(modulus));
  return static_cast<float>(1.0 / static_cast<double>(modulus)) * static_cast<float>(value);
}

HealthWorld make_health_world(const HealthParameters& parameters) {
  // Staff doubles per level up and villages multiply by `cities` per level down.
  std::int64_t patients = 0;
  std::int64_t villages = 1;
  for (int level = parameters.levels; level >= 1; --level) {
    patients += villages * (std::int64_t{1} << level) * parameters.population_ratio;
    villages *= parameters.cities;
  }
  HealthWorld world;
  // Reserved in full, so that it never moves: the lists point into it.
  world.patients.reserve(static_cast<std::size_t>(patients));
  build_village(parameters, parameters.levels, 0, world, world.root);
  return world;
}

HealthTotals health_totals(const Village& root) {
  HealthTotals totals;
  add_totals(root, totals);
  return totals;
}

void treat_patients(const HealthParameters& parameters, Village& village) {
  Hospital& hospital = village.hospital;
  remove_leaving(hospital.inside, [&](Patient& patient) {
    if (--patient.time_left != 0) return false;
    ++hospital.free_personnel;
    village.population.push_back(&patient);
    return true;
  });
  remove_leaving(hospital.assess, [&](Patient& patient) {
    if (--patient.time_left != 0) return false;
    if (health_random(patient.seed) < parameters.treat_probability) {
      // Both draws are made even at the root, which refers no one: the streams stay in step.
      const float refer_draw = health_random(patient.seed);
      if (refer_draw > parameters.refer_probability || village.level == parameters.levels) {
        patient.time_left = parameters.convalescence_time;
        patient.time += parameters.convalescence_time;
        hospital.inside.push_back(&patient);
      } else {
        ++hospital.free_personnel;
        village.referred.push_back(&patient);
      }
    } else {
      ++hospital.free_personnel;
      village.population.push_back(&patient);
    }
    return true;
  });
  remove_leaving(hospital.waiting, [&](Patient& patient) {
    if (hospital.free_personnel == 0) {
      ++patient.time;
      return false;
    }
    --hospital.free_personnel;
    patient.time_left = parameters.assess_time;
    patient.time += parameters.assess_time;
    hospital.assess.push_back(&patient);
    return true;
  });
}

void admit_patients(const HealthParameters& parameters, Village& village) {
  Hospital& hospital = village.hospital;
  for (Village& child : village.children) {
    hospital.referrals.insert(hospital.referrals.end(), child.referred.begin(),
                              child.referred.end());
    child.referred.clear();
  }
  std::sort(hospital.referrals.begin(), hospital.referrals.end(),
            [](const Patient* a, const Patient* b) { return a->id < b->id; });
  for (Patient* patient : hospital.referrals) check_in(parameters, hospital, *patient);
  hospital.referrals.clear();
  remove_leaving(village.population, [&](Patient& patient) {
    if (health_random(patient.seed) >= parameters.sick_probability) return false;
    check_in(parameters, hospital, patient);
    return true;
  });
}

void simulate_village_sequential(const HealthParameters& parameters, Village& village) {
  for (Village& child : village.children) simulate_village_sequential(parameters, child);
  treat_patients(parameters, village);
  admit_patients(parameters, village);
}

Health::Health(HealthInput input)
    : input_(std::move(input)), world_(make_health_world(input_.parameters)) {}

std::string Health::input() const {
  return input_.name + " (" + std::to_string(input_.parameters.levels) + " levels x " +
         std::to_string(input_.parameters.cities) + ")";
}

void Health::run_sequential() {
  for (int step = 0; step < input_.parameters.steps; ++step)
    simulate_village_sequential(input_.parameters, world_.root);
}

void Health::run_versa(versa::Runtime& rt) {
  const VersaSimulation simulation{&rt, &input_.parameters};
  // One task runs the steps, as in BOTS; each step's sync joins the whole tree before the next.
  rt.spawn("health", [this, &simulation] {
    for (int step = 0; step < input_.parameters.steps; ++step)
      simulate_village_versa(simulation, world_.root);
  });
  rt.sync();
}

std::string Health::verify() const {
  const HealthTotals totals = health_totals(world_.root);
  if (totals.same_checked_totals(input_.expected)) return {};
  return "totals " + totals.to_string() + "; expected " + input_.expected.to_string();
}

}  // namespace bots
