#include "option_parser.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <type_traits>
#include <utility>

namespace example {

namespace {

// CLI11's checks take the value by reference, so that they may rewrite it.
CLI::Validator validator(std::function<std::string(std::string&)> check) {
  return CLI::Validator(std::move(check), "");
}

// The largest value of an option's target: for integers, what positive() allows; 0 otherwise.
template <class T>
long long largest_of() {
  if constexpr (std::is_integral_v<T>)
    return static_cast<long long>(std::min<unsigned long long>(
        std::numeric_limits<T>::max(), std::numeric_limits<long long>::max()));
  else
    return 0;
}

template <class T>
struct ElementOf {
  using type = T;
};
template <class T>
struct ElementOf<std::vector<T>> {
  using type = T;
};

}  // namespace

OptionError::OptionError(const std::string& option, const std::string& message)
    : std::invalid_argument(option + ": " + message) {}

Option::Option(CLI::Option* option, long long largest) : option_(option), largest_(largest) {}

Option& Option::type_name(const std::string& name) {
  option_->type_name(name);
  return *this;
}

Option& Option::positive() { return whole_number_from(1); }

Option& Option::non_negative() { return whole_number_from(0); }

// Added as a transform, not a check: it rewrites the value in canonical decimal, so that CLI11's
// conversion reads the number that was checked.
Option& Option::whole_number_from(long long least) {
  if (largest_ == 0) throw std::logic_error("a whole-number check on a non-integer option");
  const long long largest = largest_;
  option_->transform(validator([least, largest](std::string& text) -> std::string {
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0')
      return (least == 1 ? "expects a positive integer, not '" : "expects an integer, not '") +
             text + "'";
    if (value < least) return "must be at least " + std::to_string(least) + ", not " + text;
    if (errno == ERANGE || value > largest)
      return "must be at most " + std::to_string(largest) + ", not " + text;
    text = std::to_string(value);
    return {};
  }));
  return *this;
}

Option& Option::check(ValueCheck check) {
  option_->check(validator([check = std::move(check)](std::string& text) { return check(text); }));
  return *this;
}

Option& Option::one_of(std::vector<std::string> names) {
  option_->check(CLI::IsMember(std::move(names)));
  return *this;
}

Option& Option::show_default() {
  option_->capture_default_str();
  return *this;
}

Option& Option::default_text(const std::string& text) {
  option_->default_str(text);
  return *this;
}

Option& Option::comma_separated() {
  option_->delimiter(',');
  return *this;
}

Option& Option::one_item_per_use() {
  option_->allow_extra_args(false);
  return *this;
}

Option& Option::needs(const std::string& other) {
  option_->needs(other);
  return *this;
}

OptionParser::OptionParser(const std::string& name, const std::string& description)
    : name_(name), app_(std::make_unique<CLI::App>(description, name)) {
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // CLI11 keeps one callback per App: it runs the checks in turn, as its own refusals.
  app_->callback([this] {
    for (const std::function<void()>& check : checks_) try {
        check();
      } catch (const OptionError& e) {
        throw CLI::ValidationError(e.what(), CLI::ExitCodes::ValidationError);
      }
  });
}

OptionParser::~OptionParser() = default;

Option& OptionParser::keep(CLI::Option* option, long long largest) {
  options_.push_back(std::unique_ptr<Option>(new Option(option, largest)));
  return *options_.back();
}

template <class T>
Option& OptionParser::add_value(const std::string& names, T& target,
                                const std::string& description) {
  return keep(app_->add_option(names, target, description),
              largest_of<typename ElementOf<T>::type>());
}

Option& OptionParser::option(const std::string& names, int& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, long& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, unsigned long& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, unsigned long long& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, double& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, std::string& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, std::vector<int>& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, std::vector<long>& target,
                             const std::string& description) {
  return add_value(names, target, description);
}
Option& OptionParser::option(const std::string& names, std::vector<std::string>& target,
                             const std::string& description) {
  return add_value(names, target, description);
}

Option& OptionParser::option(const std::string& names, std::function<void(const std::string&)> read,
                             const std::string& description) {
  // The refusal names the option as CLI11's own checks do; the name is known once it exists.
  auto option_name = std::make_shared<std::string>();
  CLI::Option* option = app_->add_option_function<std::string>(
      names,
      [read = std::move(read), option_name](const std::string& text) {
        try {
          read(text);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(*option_name, e.what());
        }
      },
      description);
  *option_name = option->get_name();
  return keep(option, 0);
}

Option& OptionParser::flag(const std::string& names, bool& target, const std::string& description) {
  return keep(app_->add_flag(names, target, description), 0);
}

Option& OptionParser::flag(const std::string& names, std::function<void()> given,
                           const std::string& description) {
  return keep(app_->add_flag_callback(names, std::move(given), description), 0);
}

void OptionParser::validate(std::function<void()> check) { checks_.push_back(std::move(check)); }

bool OptionParser::given(const std::string& name) const { return app_->count(name) > 0; }

std::optional<int> OptionParser::parse(std::vector<std::string> args, std::ostream& out,
                                       std::ostream& err) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app_->parse(args);
  } catch (const CLI::ExtrasError& e) {
    // CLI11's message lists what it could not place last first; the first is the one to fix.
    const std::vector<std::string> extras = app_->remaining();
    if (extras.empty()) return wrong_call(name_, e.what(), err);
    const bool option = extras.front().rfind('-', 0) == 0;
    return wrong_call(
        name_, (option ? "unknown option '" : "unexpected argument '") + extras.front() + "'", err);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app_->exit(e, out);
    return wrong_call(name_, e.what(), err);
  }
  return std::nullopt;
}

std::optional<int> OptionParser::parse(int argc, char** argv) {
  return parse(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}

int wrong_call(const std::string& program, const std::string& message, std::ostream& err) {
  err << program << ": " << message << "\n(see --help)\n";
  return 2;
}

int wrong_call(const std::string& program, const std::string& message) {
  return wrong_call(program, message, std::cerr);
}

}  // namespace example
