// The headers most of the suites' files include, precompiled once per build tree (test/module.mk)
// and included first by each suite's file: parsing GoogleTest, nlohmann::json and the standard
// library's containers, streams and <filesystem> was a fifth of building a suite's file. Each
// file still includes what it uses itself; this list only decides what is parsed ahead of time.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
