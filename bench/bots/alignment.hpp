// Alignment (BOTS alignment, from the pairwise stage of ClustalW): every pair of protein sequences
// is aligned, and the pair's score is the percentage of identical residues in its best local
// alignment. A pair takes three passes: a Smith-Waterman forward pass with affine gaps finds where
// the best local alignment ends and its score, a backward pass from there finds where it starts,
// and Myers and Miller's linear-space divide and conquer (1988) recovers the alignment itself.
// BOTS's protein defaults: the Gonnet 250 matrix times 10, gaps opened at 2 x 82 (the matrix's
// mean mismatch penalty) x (10 + ln of the shorter length) and extended at 10 a residue.
//
// Input: generated, with a fixed seed, in place of BOTS's prot.100.aa (100 mouse and human
// proteins of 89 to 2,069 residues, about 670 on average). Bench: 100 sequences whose lengths are
// spread log-uniformly over 60 to 1,300 residues (403 on average), their residues drawn uniformly
// from the 20 amino acids; small: 64 sequences of 10 to 80 residues. Over the file's own range
// (629 on average) the sequential run took 19 s here, against 7.1 s for BOTS on its file (the
// cause is not established: random residues rather than real proteins, or this code), so the
// range is scaled down by 0.63, which brings the run to about the suite's (6.3 s).
//
// Tasks: one per pair (4,950 at the bench scale, 2,016 small), created by one task in two loops
// as BOTS does. Verification (BOTS's): every pair's score equals the sequential run's, computed
// once in the constructor.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

namespace alignment {

// Residues are coded by their place in this alphabet, the Gonnet table's order.
inline constexpr char amino_acids[] = "ABCDEFGHIKLMNPQRSTVWXYZ";
inline constexpr int residue_codes = sizeof amino_acids - 1;

// Score of aligning two residues, by code: the Gonnet 250 matrix times 10.
using ScoreTable = std::array<std::array<int, residue_codes>, residue_codes>;
ScoreTable gonnet250_times10();

// The mean score of aligning two different residues, negated and truncated as BOTS computes it:
// its gap opening penalty scales with this.
int mean_mismatch_penalty(const ScoreTable& scores);

// A protein sequence: residue codes from index 1 on (index 0 is unused, so that position i of
// the dynamic programmes is residue i).
using Sequence = std::vector<std::uint8_t>;

// The pair's score: 100 x the identical residues of its best local alignment / the shorter
// length, truncated; 1 when a sequence is empty (as BOTS has it). The leaf of every system.
[[gnu::noinline, gnu::aligned(64)]] int pair_score(const Sequence& a, const Sequence& b,
                                                   const ScoreTable& scores, int mismatch_penalty);

}  // namespace alignment

class Alignment {
 public:
  static constexpr const char* name = "alignment";

  explicit Alignment(Scale scale)
      : Alignment(scale == Scale::bench ? 100 : 64, scale == Scale::bench ? 60 : 10,
                  scale == Scale::bench ? 1300 : 80) {}
  // `sequences` (at least 2) random sequences of min_length to max_length residues (1 <= min <=
  // max), always the same for the same arguments. Aligns every pair once sequentially, for the
  // verification.
  Alignment(int sequences, int min_length, int max_length);

  std::string input() const;
  void reset();
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  int sequence_count() const { return static_cast<int>(sequences_.size()); }
  // Residues of sequence `s`.
  int length(int s) const { return static_cast<int>(sequences_[s].size()) - 1; }
  // The scores of the last run: (si, sj), si < sj, at si * sequence_count() + sj; 0 elsewhere.
  std::span<int> scores() { return scores_; }

 private:
  // Scores the pair (si, sj): the body of every system's task.
  void align(int si, int sj) {
    scores_[si * sequences_.size() + sj] =
        alignment::pair_score(sequences_[si], sequences_[sj], table_, mismatch_penalty_);
  }

  std::vector<alignment::Sequence> sequences_;
  alignment::ScoreTable table_;
  int mismatch_penalty_;
  int min_length_;
  int max_length_;
  std::vector<int> scores_;     // written by the pairs' tasks, each its own element
  std::vector<int> reference_;  // scores_ of the sequential run
};

}  // namespace bots
