// A byte count for people: "1.2 GB", "340.0 MB", "12.3 kB", "512 B" (decimal units, one decimal
// past bytes). For messages only; files that programs read carry exact byte counts.
#ifndef KATRACE_COMMON_HUMAN_BYTES_H_
#define KATRACE_COMMON_HUMAN_BYTES_H_

#include <stdint.h>
#include <stdio.h>

#include <string>

namespace katrace {

inline std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char buf[32];
  snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return buf;
}

}  // namespace katrace

#endif  // KATRACE_COMMON_HUMAN_BYTES_H_
