// Sleeps that end on time: for the runtime's threads that poll on a short period or model a
// device's times by sleeping.
#pragma once

namespace versa::detail {

// Lets the calling thread's sleeps and timed waits end within about a microsecond of their
// deadline. Linux otherwise lets each run up to 50 us late (the default timer slack), which
// turns a 20 us poll into about 70-90 us. No effect elsewhere.
void use_fine_timer_slack();

}  // namespace versa::detail
