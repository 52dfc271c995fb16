#include "alignment.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string_view>

namespace bots {
namespace alignment {
namespace {

// The Gonnet 250 matrix (Gonnet, Cohen and Benner, 1992) as ClustalW tabulates it and BOTS takes
// it: the lower triangle, row by row, in the order of `amino_acids`; B, X and Z score 0.
// clang-format off
constexpr std::array<int, residue_codes * (residue_codes + 1) / 2> gonnet250_lower_triangle = {
   24,
    0,   0,
    5,   0, 115,
   -3,   0, -32,  47,
    0,   0, -30,  27,  36,
  -23,   0,  -8, -45, -39,  70,
    5,   0, -20,   1,  -8, -52,  66,
   -8,   0, -13,   4,   4,  -1, -14,  60,
   -8,   0, -11, -38, -27,  10, -45, -22,  40,
   -4,   0, -28,   5,  12, -33, -11,   6, -21,  32,
  -12,   0, -15, -40, -28,  20, -44, -19,  28, -21,  40,
   -7,   0,  -9, -30, -20,  16, -35, -13,  25, -14,  28,  43,
   -3,   0, -18,  22,   9, -31,   4,  12, -28,   8, -30, -22,  38,
    3,   0, -31,  -7,  -5, -38, -16, -11, -26,  -6, -23, -24,  -9,  76,
   -2,   0, -24,   9,  17, -26, -10,  12, -19,  15, -16, -10,   7,  -2,  27,
   -6,   0, -22,  -3,   4, -32, -10,   6, -24,  27, -22, -17,   3,  -9,  15,  47,
   11,   0,   1,   5,   2, -28,   4,  -2, -18,   1, -21, -14,   9,   4,   2,  -2,  22,
    6,   0,  -5,   0,  -1, -22, -11,  -3,  -6,   1, -13,  -6,   5,   1,   0,  -2,  15,  25,
    1,   0,   0, -29, -19,   1, -33, -20,  31, -17,  18,  16, -22, -18, -15, -20, -10,   0,  34,
  -36,   0, -10, -52, -43,  36, -40,  -8, -18, -35,  -7, -10, -36, -50, -27, -16, -33, -35, -26, 142,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
  -22,   0,  -5, -28, -27,  51, -40,  22,  -7, -21,   0,  -2, -14, -31, -17, -18, -19, -19, -11,  41,   0,  78,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
};
// clang-format on

// The residues of real proteins: every letter of the alphabet but the ambiguity codes B, X, Z.
constexpr std::string_view standard_amino_acids = "ACDEFGHIKLMNPQRSTVWY";

// BOTS's protein defaults for pairwise alignment, in its integer units (x 100).
constexpr double gap_open = 10.0;
constexpr double gap_extend = 0.1;
constexpr int integer_scale = 100;

struct GapPenalties {
  int open;    // paid once per gap, on top of the extension of its first residue
  int extend;  // per residue
};

// BOTS's pairwise penalties: opening grows with the log of the shorter sequence and scales with
// the matrix's mean mismatch score.
GapPenalties gap_penalties(int shorter_length, int mismatch_penalty) {
  const double open_for_length = gap_open + std::log(static_cast<double>(shorter_length));
  const int open = mismatch_penalty <= 0 ? static_cast<int>(2 * integer_scale * open_for_length)
                                         : static_cast<int>(2 * mismatch_penalty * open_for_length);
  return {open, static_cast<int>(integer_scale * gap_extend)};
}

// An alignment as Myers and Miller record it: 0 for a pair of aligned residues, k > 0 for k
// residues of b against a gap, -k for k residues of a against a gap. A deletion extends the
// deletion just recorded; an insertion that follows a deletion is recorded before it.
class EditScript {
 public:
  explicit EditScript(std::size_t capacity) { operations_.reserve(capacity); }

  void delete_residues(int k) {
    if (last_ < 0) {
      last_ = operations_.back() -= k;
    } else {
      operations_.push_back(-k);
      last_ = -k;
    }
  }
  void insert_residues(int k) {
    if (last_ < 0) {
      operations_.back() = k;
      operations_.push_back(last_);
    } else {
      operations_.push_back(k);
      last_ = k;
    }
  }
  void match() {
    operations_.push_back(0);
    last_ = 0;
  }

  const std::vector<int>& operations() const { return operations_; }

 private:
  std::vector<int> operations_;
  int last_ = 0;  // the last operation recorded, or the pending deletion it sits behind
};

struct Cell {
  int a = 0;  // position in a, from 1
  int b = 0;  // position in b, from 1
};

// Aligns one pair; its rows of dynamic programming are sized once for the whole pair (the divide
// and conquer reuses them at every level, as a level is done with them before it recurses).
class PairAligner {
 public:
  PairAligner(const Sequence& a, const Sequence& b, const ScoreTable& scores, GapPenalties gaps)
      : a_(a),
        b_(b),
        scores_(scores),
        open_(gaps.open),
        extend_(gaps.extend),
        h_(b.size()),
        d_(b.size()),
        reverse_h_(b.size()),
        reverse_d_(b.size()),
        script_(a.size() + b.size()) {}

  // 100 x identical pairs of the best local alignment / the shorter length.
  int identity_percent();

 private:
  int score(int i, int j) const { return scores_[a_[i]][b_[j]]; }
  // Cost of a gap of k residues.
  int gap(int k, int open) const { return k <= 0 ? 0 : open + extend_ * k; }

  int forward_pass(Cell& end);
  Cell backward_pass(Cell end, int best_score);
  int align_globally(int a0, int b0, int m, int n, int open_before, int open_after);
  int align_one_residue(int a0, int b0, int n, int open_before, int open_after);
  void sweep_forward(int a0, int b0, int rows, int n, int open_before);
  void sweep_backward(int a0, int b0, int m, int first_row, int n, int open_after);
  int identities(Cell start) const;

  const Sequence& a_;
  const Sequence& b_;
  const ScoreTable& scores_;
  int open_;
  int extend_;
  // Per column j of b: the best score of a path to (row, j), and of one that ends with a residue
  // of a against a gap (Gotoh's affine gaps); the reverse_ pair for paths from (row, j) onwards.
  std::vector<int> h_;
  std::vector<int> d_;
  std::vector<int> reverse_h_;
  std::vector<int> reverse_d_;
  EditScript script_;
};

// Smith-Waterman with affine gaps, one row at a time: the best local score and the cell where it
// is first reached, scanning rows then columns.
int PairAligner::forward_pass(Cell& end) {
  const int n = static_cast<int>(a_.size()) - 1;
  const int m = static_cast<int>(b_.size()) - 1;
  std::fill(h_.begin(), h_.end(), 0);
  std::fill(d_.begin(), d_.end(), -open_);
  int best = 0;
  end = {};
  for (int i = 1; i <= n; ++i) {
    int h = 0;
    int diagonal = 0;
    int left = -open_;  // best path ending with a residue of b against a gap
    for (int j = 1; j <= m; ++j) {
      left = std::max(left - extend_, h - open_ - extend_);
      d_[j] = std::max(d_[j] - extend_, h_[j] - open_ - extend_);
      h = std::max({diagonal + score(i, j), left, d_[j], 0});
      diagonal = h_[j];
      h_[j] = h;
      if (h > best) {
        best = h;
        end = {i, j};
      }
    }
  }
  return best;
}

// From the end backwards, with paths forced to end there: the first cell from which a path
// reaches the best local score is where the local alignment starts.
Cell PairAligner::backward_pass(Cell end, int best_score) {
  std::fill(h_.begin() + 1, h_.begin() + end.b + 1, -1);
  std::fill(d_.begin() + 1, d_.begin() + end.b + 1, -1);
  int best = 0;
  Cell start{1, 1};
  for (int i = end.a; i > 0; --i) {
    int h = -1;
    int left = -1;
    int diagonal = i == end.a ? 0 : -1;
    for (int j = end.b; j > 0; --j) {
      left = std::max(left - extend_, h - open_ - extend_);
      d_[j] = std::max(d_[j] - extend_, h_[j] - open_ - extend_);
      h = std::max({diagonal + score(i, j), left, d_[j]});
      diagonal = h_[j];
      h_[j] = h;
      if (h > best) {
        best = h;
        start = {i, j};
        if (best >= best_score) return start;
      }
    }
  }
  return start;
}

// Myers and Miller's linear-space divide and conquer: records in script_ an optimal global
// alignment of a[a0+1 .. a0+m] with b[b0+1 .. b0+n] and returns its score. A gap at the start
// costs `open_before` to open, one at the end `open_after` (0 where it continues a gap of the
// enclosing alignment). The optimal path crosses the middle row of a at the column where the
// best forward and backward scores meet, or in a gap spanning that row; each side is solved
// recursively.
int PairAligner::align_globally(int a0, int b0, int m, int n, int open_before, int open_after) {
  if (n <= 0) {
    if (m > 0) script_.delete_residues(m);
    return -gap(m, open_before);
  }
  if (m <= 0) {
    script_.insert_residues(n);
    return -gap(n, open_before);
  }
  if (m == 1) return align_one_residue(a0, b0, n, open_before, open_after);

  const int middle = m / 2;
  sweep_forward(a0, b0, middle, n, open_before);
  sweep_backward(a0, b0, m, middle, n, open_after);
  // Ties go to a column the path enters other than by a gap and leaves by one.
  int best = h_[0] + reverse_h_[0];
  int best_j = 0;
  bool gap_across = false;
  for (int j = 0; j <= n; ++j) {
    const int through = h_[j] + reverse_h_[j];
    if (through > best || (through == best && h_[j] != d_[j] && reverse_h_[j] == reverse_d_[j])) {
      best = through;
      best_j = j;
    }
  }
  // A gap across the middle row is opened once, not twice.
  for (int j = n; j >= 0; --j) {
    const int across = d_[j] + reverse_d_[j] + open_;
    if (across > best) {
      best = across;
      best_j = j;
      gap_across = true;
    }
  }

  if (!gap_across) {
    align_globally(a0, b0, middle, best_j, open_before, open_);
    align_globally(a0 + middle, b0 + best_j, m - middle, n - best_j, open_, open_after);
  } else {
    align_globally(a0, b0, middle - 1, best_j, open_before, 0);
    script_.delete_residues(2);
    align_globally(a0 + middle + 1, b0 + best_j, m - middle - 1, n - best_j, 0, open_after);
  }
  return best;
}

// One residue of a against b[b0+1 .. b0+n]: against a gap before or after all of b, or against
// one residue of b.
int PairAligner::align_one_residue(int a0, int b0, int n, int open_before, int open_after) {
  int best = std::max(-(open_before + extend_) - gap(n, open_after),
                      -(open_after + extend_) - gap(n, open_before));
  int best_j = 0;
  for (int j = 1; j <= n; ++j) {
    const int through_j = score(a0 + 1, b0 + j) - gap(n - j, open_after) - gap(j - 1, open_before);
    if (through_j > best) {
      best = through_j;
      best_j = j;
    }
  }
  if (best_j == 0) {
    script_.delete_residues(1);
    script_.insert_residues(n);
  } else {
    if (best_j > 1) script_.insert_residues(best_j - 1);
    script_.match();
    if (best_j < n) script_.insert_residues(n - best_j);
  }
  return best;
}

// h_ and d_ for rows 1 .. rows of a[a0+1 ..] against b[b0+1 .. b0+n], from the start (row 0,
// column 0) on: h_[j] the best score of a path to (rows, j), d_[j] of one that ends in a gap.
void PairAligner::sweep_forward(int a0, int b0, int rows, int n, int open_before) {
  int t = -open_before;
  h_[0] = 0;
  for (int j = 1; j <= n; ++j) {
    t -= extend_;
    h_[j] = t;
    d_[j] = t - open_;
  }
  t = -open_before;
  for (int i = 1; i <= rows; ++i) {
    int diagonal = h_[0];
    t -= extend_;
    h_[0] = t;
    int h = t;
    int left = t - open_;
    for (int j = 1; j <= n; ++j) {
      left = std::max(left - extend_, h - open_ - extend_);
      const int up = std::max(d_[j] - extend_, h_[j] - open_ - extend_);
      h = std::max({diagonal + score(a0 + i, b0 + j), left, up});
      diagonal = h_[j];
      h_[j] = h;
      d_[j] = up;
    }
  }
  d_[0] = h_[0];
}

// reverse_h_ and reverse_d_ likewise for the paths from (first_row, j) to the end (m, n), over
// rows m .. first_row + 1.
void PairAligner::sweep_backward(int a0, int b0, int m, int first_row, int n, int open_after) {
  int t = -open_after;
  reverse_h_[n] = 0;
  for (int j = n - 1; j >= 0; --j) {
    t -= extend_;
    reverse_h_[j] = t;
    reverse_d_[j] = t - open_;
  }
  t = -open_after;
  for (int i = m - 1; i >= first_row; --i) {
    int diagonal = reverse_h_[n];
    t -= extend_;
    reverse_h_[n] = t;
    int h = t;
    int left = t - open_;
    for (int j = n - 1; j >= 0; --j) {
      left = std::max(left - extend_, h - open_ - extend_);
      const int down = std::max(reverse_d_[j] - extend_, reverse_h_[j] - open_ - extend_);
      h = std::max({diagonal + score(a0 + i + 1, b0 + j + 1), left, down});
      diagonal = reverse_h_[j];
      reverse_h_[j] = h;
      reverse_d_[j] = down;
    }
  }
  reverse_d_[n] = reverse_h_[n];
}

// Identical residue pairs along the script from `start` (the sequences hold no gap symbols).
int PairAligner::identities(Cell start) const {
  int count = 0;
  int i = start.a;
  int j = start.b;
  for (int operation : script_.operations()) {
    if (operation == 0) {
      count += a_[i] == b_[j];
      ++i;
      ++j;
    } else if (operation > 0) {
      j += operation;
    } else {
      i -= operation;
    }
  }
  return count;
}

int PairAligner::identity_percent() {
  Cell end;
  const int best = forward_pass(end);
  const Cell start = backward_pass(end, best);
  align_globally(start.a - 1, start.b - 1, end.a - start.a + 1, end.b - start.b + 1, 0, 0);
  const int shorter = static_cast<int>(std::min(a_.size(), b_.size())) - 1;
  return static_cast<int>(100.0 * identities(start) / static_cast<double>(shorter));
}

int residue_code(char letter) {
  return static_cast<int>(std::string_view(amino_acids).find(letter));
}

// Lengths at the `count` quantiles of a log-uniform distribution over [min_length, max_length],
// in a random order: the spread of the range without the noise of drawing 100 lengths (a draw
// can make the pairs' work a third heavier or lighter). Residues uniform over the 20.
std::vector<Sequence> random_sequences(int count, int min_length, int max_length) {
  // mt19937_64's output is fixed by the standard; the library's distributions and shuffle are
  // not, so the draws are made here.
  std::mt19937_64 random(2009);
  const double log_min = std::log(static_cast<double>(min_length));
  const double log_max = std::log(static_cast<double>(max_length));
  std::vector<int> lengths;
  for (int s = 0; s < count; ++s) {
    const double quantile = (s + 0.5) / count;
    const long length = std::lround(std::exp(log_min + quantile * (log_max - log_min)));
    lengths.push_back(std::clamp(static_cast<int>(length), min_length, max_length));
  }
  for (std::size_t s = lengths.size() - 1; s > 0; --s)
    std::swap(lengths[s], lengths[random() % (s + 1)]);
  std::vector<Sequence> sequences;
  for (int length : lengths) {
    Sequence sequence(static_cast<std::size_t>(length) + 1, 0);
    for (int r = 1; r <= length; ++r)
      sequence[r] = static_cast<std::uint8_t>(
          residue_code(standard_amino_acids[random() % standard_amino_acids.size()]));
    sequences.push_back(std::move(sequence));
  }
  return sequences;
}

}  // namespace

ScoreTable gonnet250_times10() {
  ScoreTable table{};
  std::size_t next = 0;
  for (int i = 0; i < residue_codes; ++i)
    for (int j = 0; j <= i; ++j) table[i][j] = table[j][i] = 10 * gonnet250_lower_triangle[next++];
  return table;
}

int mean_mismatch_penalty(const ScoreTable& scores) {
  int sum = 0;
  for (int i = 0; i < residue_codes; ++i)
    for (int j = 0; j < i; ++j) sum += scores[i][j];
  // BOTS divides by the pairs of 22 residues, one fewer than its table has, and truncates.
  constexpr int pairs = 22 * 21 / 2;
  return -(sum / pairs);
}

int pair_score(const Sequence& a, const Sequence& b, const ScoreTable& scores,
               int mismatch_penalty) {
  const int shorter = static_cast<int>(std::min(a.size(), b.size())) - 1;
  if (shorter <= 0) return 1;
  return PairAligner(a, b, scores, gap_penalties(shorter, mismatch_penalty)).identity_percent();
}

}  // namespace alignment

Alignment::Alignment(int sequences, int min_length, int max_length)
    : table_(alignment::gonnet250_times10()),
      mismatch_penalty_(alignment::mean_mismatch_penalty(table_)),
      min_length_(min_length),
      max_length_(max_length) {
  if (sequences < 2 || min_length < 1 || max_length < min_length)
    throw std::invalid_argument(
        "alignment: needs at least 2 sequences and 1 <= min_length <= "
        "max_length, not " +
        std::to_string(sequences) + " of " + std::to_string(min_length) + " to " +
        std::to_string(max_length));
  sequences_ = alignment::random_sequences(sequences, min_length, max_length);
  reset();
  run_sequential();
  reference_ = scores_;
  reset();
}

std::string Alignment::input() const {
  return std::to_string(sequence_count()) + " seqs, " + std::to_string(min_length_) + "-" +
         std::to_string(max_length_) + " aa";
}

void Alignment::reset() { scores_.assign(sequences_.size() * sequences_.size(), 0); }

void Alignment::run_sequential() {
  for (int si = 0; si < sequence_count(); ++si)
    for (int sj = si + 1; sj < sequence_count(); ++sj) align(si, sj);
}

void Alignment::run_versa(versa::Runtime& rt) {
  rt.spawn("alignment", [this, &rt] {
    for (int si = 0; si < sequence_count(); ++si)
      for (int sj = si + 1; sj < sequence_count(); ++sj)
        rt.spawn("pair", [this, si, sj] { align(si, sj); });
    rt.sync();
  });
  rt.sync();
}

std::string Alignment::verify() const {
  const int n = sequence_count();
  int wrong = 0;
  std::string first;
  for (int si = 0; si < n; ++si)
    for (int sj = si + 1; sj < n; ++sj) {
      const std::size_t at = static_cast<std::size_t>(si) * n + sj;
      if (scores_[at] == reference_[at]) continue;
      if (wrong++ == 0)
        first = "pair (" + std::to_string(si + 1) + ", " + std::to_string(sj + 1) + ") scores " +
                std::to_string(scores_[at]) + ", the sequential run " +
                std::to_string(reference_[at]);
    }
  if (wrong == 0) return {};
  return first + (wrong > 1 ? " (and " + std::to_string(wrong - 1) + " more pairs)" : "");
}

}  // namespace bots
