// Strings: each thread remembers the ids of the strings it interned, so a repeated name costs a
// load and a compare. What it remembers must never name the wrong text: not in a later session
// (the same address may then hold another string: a reload, or here a buffer reused on purpose),
// not on another thread, and not for a string the shared table could not take.
#include <string.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

class StringTest : public PluginTest {
 protected:
  // The func of every Coll slice in the trace at |path|.
  std::vector<std::string> CollFuncs(const std::string& path) {
    std::vector<std::string> funcs;
    auto trace = ExpectValidTrace(path);
    for (const auto& e : Slices(trace, "Coll")) funcs.push_back(e["args"].value("func", std::string()));
    return funcs;
  }
};

// One address, two texts, two sessions: the second session's trace names the second text.
TEST_F(StringTest, AnAddressNamesItsTextOfTheSessionItIsUsedIn) {
  static char func[32];
  strcpy(func, "AllReduce");
  auto colls = [&](void* ctx) {
    for (int i = 0; i < 3; ++i) {
      void* h = nullptr;
      auto d = CollDescr(nullptr, func, static_cast<uint64_t>(i), 64, 0);
      v6().startEvent(ctx, &h, &d);
      v6().stopEvent(h);
    }
  };
  Comm a = InitComm(0x5a1, 0, 1);
  colls(a.ctx);
  v6().finalize(a.ctx);
  EXPECT_EQ(CollFuncs(trace_path_), (std::vector<std::string>{"AllReduce", "AllReduce", "AllReduce"}));

  strcpy(func, "Broadcast");
  const std::string second = dir_ + "/second.json";
  setenv("KATRACE_OUTPUT", second.c_str(), 1);
  Comm b = InitComm(0x5a2, 0, 1);
  colls(b.ctx);
  v6().finalize(b.ctx);
  EXPECT_EQ(CollFuncs(second), (std::vector<std::string>{"Broadcast", "Broadcast", "Broadcast"}));
}

// Many distinct strings from several threads, each used again and again (more than a thread's
// memo holds, so entries are replaced): every Coll carries its own name.
TEST_F(StringTest, ManyStringsFromManyThreadsKeepTheirNames) {
  static char names[40][16];
  for (int i = 0; i < 40; ++i) snprintf(names[i], sizeof(names[i]), "Func%02d", i);
  Comm c = InitComm(0x5a3, 0, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (int i = 0; i < 40; ++i) {
          void* h = nullptr;
          auto d = CollDescr(nullptr, names[(i * 7 + t) % 40], static_cast<uint64_t>(round * 40 + i), 64, 0);
          v6().startEvent(c.ctx, &h, &d);
          v6().stopEvent(h);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  std::multiset<std::string> seen;
  for (const auto& e : Slices(trace, "Coll")) seen.insert(e["args"].value("func", std::string()));
  ASSERT_EQ(seen.size(), 4u * 5 * 40);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(seen.count(names[i]), 4u * 5) << names[i];
}

}  // namespace
}  // namespace katrace_test
