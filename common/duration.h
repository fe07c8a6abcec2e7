// The duration grammar, one for every place a user writes a time: the plugin's KATRACE_DELAY,
// KATRACE_DURATION and KATRACE_HANG_TIMEOUT, katrace-merge's --from and --to, and katrace-sim's
// --hang-for, --gpu-clock offset:D and --gpu-jitter. README.md ("Durations") documents it.
//
// A number, optionally with a fraction (1.5, 0.25), then optionally a unit: ns, us, ms, s, m (or
// min), h, in any case. A bare number is seconds, as Nsight Systems reads its --delay and
// --duration. Blanks around the value and between number and unit are allowed (environment
// variables are often written with them). The result is rounded to the nearest nanosecond and
// must fit in int64_t ns (about 292 years). Anything else is refused: an empty value, a sign
// (except where an offset is asked for), a number without digits before its point, an unknown
// unit or anything after the unit.
#ifndef KATRACE_COMMON_DURATION_H_
#define KATRACE_COMMON_DURATION_H_

#include <stdint.h>

#include <string>

namespace katrace {

// What the grammar accepts, in a few words, for help and error texts: "a number with a unit ...".
extern const char kDurationSyntax[];

// Parses a duration (>= 0) into *ns. False on anything else, *ns untouched and |*error| saying
// what is wrong, phrased to follow the value in a message: "KATRACE_DELAY='1x' " + error. It
// does not repeat kDurationSyntax; the caller adds it where the message needs it.
bool ParseDuration(const std::string& text, int64_t* ns, std::string* error);

// The same grammar with an optional leading '+' or '-': an offset, which may be negative.
bool ParseSignedDuration(const std::string& text, int64_t* ns, std::string* error);

}  // namespace katrace

#endif  // KATRACE_COMMON_DURATION_H_
