// Health: a simulation of a country's health system over time (BOTS health, after Olden's model of
// the Colombian health care system). Villages form a tree, each with a hospital; every time step
// each villager may fall sick and go to the village's hospital, where patients wait for staff, are
// assessed, then treated there, sent home, or referred up to the hospital of the village above.
// Each step simulates the tree bottom-up: a village's children's sub-trees run as tasks while the
// village treats its own patients, then it admits its children's referrals (in the order of the
// patients' ids, so that the result does not depend on the schedule) and its newly sick. Tasks
// down to BOTS's cut-off depth; deeper sub-trees run sequentially inside their task.
//
// BOTS adds a referral to the parent's list under a lock; here each village keeps the patients it
// refers in its own list, which the parent takes after joining its children: no lock, and the
// same admissions.
//
// Input: BOTS's inputs/health/*.input (reproduced as data in health.cpp), with the totals the
// suite expects after the run. Verification as BOTS's check_village: the totals of hospitals,
// staff, patients, check-ins, and of patients at home, waiting, in assessment and in treatment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

// BOTS's default cut-off: the villages of the top 2 levels run their children as tasks.
inline constexpr int health_cutoff = 2;

struct HealthParameters {
  int levels;               // of the village tree; the root is at this level, leaves at 1
  int cities;               // children per village above the leaves
  int population_ratio;     // villagers per member of hospital staff; a village at level l
                            // has 2^l staff
  int steps;                // time steps simulated
  int assess_time;          // steps a patient spends in assessment
  int convalescence_time;   // steps a patient spends in treatment
  std::int32_t seed;        // of the villages' random streams
  float sick_probability;   // per villager and step
  float treat_probability;  // after assessment: treated here or higher up, else sent home
  float refer_probability;  // a patient to treat is referred up (except at the root)
};

// What BOTS's check_village counts, over all villages and their hospitals.
struct HealthTotals {
  std::int64_t hospitals = 0;
  std::int64_t personnel = 0;
  std::int64_t patients = 0;
  std::int64_t checkins = 0;  // hospital admissions, summed over patients
  std::int64_t at_home = 0;
  std::int64_t waiting = 0;
  std::int64_t assessed = 0;
  std::int64_t treated = 0;
  std::int64_t time = 0;  // steps spent in hospitals, summed over patients (not checked)

  // Equal in what BOTS checks (all but `time`).
  bool same_checked_totals(const HealthTotals& other) const;
  std::string to_string() const;
};

struct HealthInput {
  std::string name;
  HealthParameters parameters;
  HealthTotals expected;  // the suite's totals after `steps` steps
};

// BOTS's input `name`: "test", "small", "medium" or "large". Throws std::invalid_argument for
// another name.
HealthInput health_input(const std::string& name);

struct Patient {
  std::int32_t id;    // the order of creation, which orders a hospital's referrals
  std::int32_t seed;  // of the patient's random stream
  int time;           // steps spent in hospitals
  int time_left;      // in assessment or treatment
  int hospitals_visited;
};

using PatientList = std::vector<Patient*>;

struct Hospital {
  int personnel;
  int free_personnel;
  PatientList waiting;
  PatientList assess;
  PatientList inside;
  PatientList referrals;  // from the children's hospitals, admitted after they are joined
};

struct Village {
  int level;
  std::vector<Village> children;  // empty at level 1
  PatientList population;
  Hospital hospital;
  PatientList referred;  // patients this village refers up, for its parent to take
};

// A village tree and the patients its lists point to.
struct HealthWorld {
  std::vector<Patient> patients;
  Village root;
};

// The tree before the first step, as BOTS allocates it (patients numbered in its order).
HealthWorld make_health_world(const HealthParameters& parameters);

HealthTotals health_totals(const Village& root);

class Health {
 public:
  static constexpr const char* name = "health";

  explicit Health(Scale scale) : Health(health_input(scale == Scale::bench ? "medium" : "test")) {}
  explicit Health(HealthInput input);

  std::string input() const;
  void reset() { world_ = make_health_world(input_.parameters); }
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  const HealthWorld& world() const { return world_; }
  HealthWorld& world() { return world_; }

 private:
  HealthInput input_;
  HealthWorld world_;
};

// The shared leaf code of every system.

// The next number of a patient's or village's stream, in [0, 1) (BOTS's my_rand: Park and
// Miller's minimal standard generator on a scrambled seed, with the suite's 32-bit seed update,
// whose wrap-around its expected totals depend on).
float health_random(std::int32_t& seed);

// The part of a step that touches only the village's own hospital: treatment ends, assessments
// end (some patients referred up), waiting patients get free staff. Runs while the children's
// sub-trees are simulated.
void treat_patients(const HealthParameters& parameters, Village& village);

// The part of a step after the children have finished theirs: their referrals are admitted, by
// patient id, then the villagers who fall sick.
void admit_patients(const HealthParameters& parameters, Village& village);

// One step of the sub-tree under `village`, sequentially.
void simulate_village_sequential(const HealthParameters& parameters, Village& village);

// Whether the children of a village at `level` run as tasks (BOTS's manual cut-off).
inline bool health_children_as_tasks(const HealthParameters& parameters, int level) {
  return parameters.levels - level < health_cutoff;
}

}  // namespace bots
