// The command-line tools' option parser: CLI11 behind a small interface of our own. CLI11 is
// header-only, and a source file that declares options with it spends 10-20 s compiling CLI11's
// inline functions (the Cholesky tool's took 35 s with them, 15 s without); here they are
// compiled once, in option_parser.cpp. The rules every tool follows are built in: a repeated option
// takes its last value, so that a script's defaults can be overridden by appending ("scripts/demo
// --n 8192"); a wrong call exits with status 2 and a message naming the tool and the option.
//
//   example::OptionParser parser{"cholesky", "Factors a random SPD matrix."};
//   long n = 4096;
//   parser.option("-n,--n", n, "matrix size").positive().type_name("N").show_default();
//   if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace example {

// Options that do not go together, or a value that only makes sense beside others: thrown by the
// checks given to OptionParser::validate; the call then fails with "<option>: <message>".
class OptionError : public std::invalid_argument {
 public:
  OptionError(const std::string& option, const std::string& message);
};

// A check of one value as given on the command line: returns an empty string when the value is
// acceptable, else what is wrong with it (the parser adds the option's name).
using ValueCheck = std::function<std::string(const std::string& text)>;

// One declared option, to refine with the calls below (each returns the option, to chain them).
// Owned by its OptionParser, and valid as long as it.
class Option {
 public:
  // What stands for the value in the help ("N", "LIST").
  Option& type_name(const std::string& name);
  // Each value must be a whole decimal number from 1 to the largest the target's type holds. CLI11
  // alone would read "010" as octal and "0x10" as hex, and saturate past the largest long; the
  // message here quotes the value. For integer targets only.
  Option& positive();
  // The same from 0.
  Option& non_negative();
  // Each value must pass `check`.
  Option& check(ValueCheck check);
  // Each value must be one of `names`.
  Option& one_of(std::vector<std::string> names);
  // The help shows the target's value before parsing as the default.
  Option& show_default();
  // The help shows `text` as the default.
  Option& default_text(const std::string& text);
  // A list option's values may be given as one comma-separated item ("--workers 1,2,4").
  Option& comma_separated();
  // A list option takes one item per use, so that a word after it is not taken for a value.
  Option& one_item_per_use();
  // The option is refused unless `other` (its name, e.g. "--check") is given too.
  Option& needs(const std::string& other);

 private:
  friend class OptionParser;
  Option(CLI::Option* option, long long largest);
  Option& whole_number_from(long long least);

  CLI::Option* option_;  // owned by the parser's CLI::App
  long long largest_;    // the target type's largest value, for positive() and non_negative()
};

// A tool's command line: its options, bound to variables, and the parse that fills them.
class OptionParser {
 public:
  // `name` is the tool's name in its messages; `description` heads its help.
  OptionParser(const std::string& name, const std::string& description);
  ~OptionParser();
  OptionParser(const OptionParser&) = delete;
  OptionParser& operator=(const OptionParser&) = delete;

  // Declares an option with a value, stored in `target` when given; `names` as CLI11 takes them
  // ("-n,--n"; a name without dashes is a positional argument). A list target takes one or more
  // values.
  Option& option(const std::string& names, int& target, const std::string& description);
  Option& option(const std::string& names, long& target, const std::string& description);
  Option& option(const std::string& names, unsigned long& target, const std::string& description);
  Option& option(const std::string& names, unsigned long long& target,
                 const std::string& description);
  Option& option(const std::string& names, double& target, const std::string& description);
  Option& option(const std::string& names, std::string& target, const std::string& description);
  Option& option(const std::string& names, std::vector<int>& target,
                 const std::string& description);
  Option& option(const std::string& names, std::vector<long>& target,
                 const std::string& description);
  Option& option(const std::string& names, std::vector<std::string>& target,
                 const std::string& description);

  // Declares an option whose text `read` takes in; `read` throws std::invalid_argument, with a
  // message that need not name the option, to refuse it.
  Option& option(const std::string& names, std::function<void(const std::string&)> read,
                 const std::string& description);

  // Declares a flag: `target` becomes true when it is given.
  Option& flag(const std::string& names, bool& target, const std::string& description);
  // Declares a flag that calls `given` when it is given.
  Option& flag(const std::string& names, std::function<void()> given,
               const std::string& description);

  // Adds a check of the options together, run once they are all parsed; it throws OptionError
  // to refuse them. Checks run in the order added.
  void validate(std::function<void()> check);

  // Whether the option `name` was given (after parse).
  bool given(const std::string& name) const;

  // The tool's name, as its messages begin.
  const std::string& name() const { return name_; }

  // Parses `args` (the program name left out) into the options' targets. Returns the exit status
  // when the tool is to stop there: 0 after printing the help (-h, --help) on `out`, 2 after a
  // wrong call, reported on `err` with the option's name; nothing when the tool is to run.
  std::optional<int> parse(std::vector<std::string> args, std::ostream& out, std::ostream& err);
  // The same for main's arguments, on std::cout and std::cerr.
  std::optional<int> parse(int argc, char** argv);

 private:
  template <class T>
  Option& add_value(const std::string& names, T& target, const std::string& description);
  Option& keep(CLI::Option* option, long long largest);

  std::string name_;
  std::unique_ptr<CLI::App> app_;
  std::vector<std::unique_ptr<Option>> options_;  // stable addresses: callers keep references
  std::vector<std::function<void()>> checks_;     // validate's, in order
};

// Reports a wrong call on `err`, naming the tool, and returns its exit status: 2, apart from
// run-time failures (status 1), so that scripts can tell a wrong call from a failed run.
int wrong_call(const std::string& program, const std::string& message, std::ostream& err);
int wrong_call(const std::string& program, const std::string& message);

}  // namespace example
