// Test support: loads a katrace trace (.json or .json.gz) with nlohmann/json and checks the rules
// Perfetto and docs/trace-format.md set: structure, metadata, per-track nesting, flows, and GPU
// children inside their parent's GPU extent.
#ifndef KATRACE_TEST_SUPPORT_TRACE_VALIDATION_H_
#define KATRACE_TEST_SUPPORT_TRACE_VALIDATION_H_

#include <stdint.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace katrace_test {

// Parses the whole file; throws nlohmann::json::parse_error on invalid JSON.
nlohmann::json LoadTrace(const std::string& path);

// What a strict JSON parser (nlohmann's, which follows RFC 8259: ill-formed UTF-8, NaN, comments
// and trailing commas are refused) says of the file at |path| as its bytes are, or "" when it
// parses. The strict check the tests need, with nothing outside the build's own packages.
std::string StrictJsonError(const std::string& path);

// Parses |text|: throws nlohmann::json::parse_error on invalid JSON, or returns a discarded value
// when |throw_on_error| is false. The suites that link this file parse through here, so that
// the parser is compiled once, in this file, which is built for a quick run (the Makefile says
// why): a copy inlined in a suite's own file would be the one the linker keeps.
nlohmann::json ParseJson(const std::string& text, bool throw_on_error = true);

// Every rule violated, one line each; empty when the trace is clean.
std::vector<std::string> ValidateTrace(const nlohmann::json& trace);

// The footer (otherData.katrace).
const nlohmann::json& Footer(const nlohmann::json& trace);

// X events of one category (cat), in file order.
std::vector<nlohmann::json> Slices(const nlohmann::json& trace, const std::string& cat);

// Loads, validates with ValidateTrace and, when built, runs katrace-check on it; records a
// GoogleTest failure for every problem. Returns the parsed trace.
nlohmann::json ExpectValidTrace(const std::string& path);

}  // namespace katrace_test

#endif  // KATRACE_TEST_SUPPORT_TRACE_VALIDATION_H_
