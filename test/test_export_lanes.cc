// LaneAllocator: interval partitioning with the fewest lanes in start order, never an overlap on
// one lane in any order, and zero-length tails kept off the next item's lane.
#include <stdint.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/export/lane_allocator.h"

namespace katrace {
namespace exporting {
namespace {

struct Item {
  uint64_t start, end;
};

// The most items open at once (half-open [start, end) intervals): the fewest lanes possible.
int MaxConcurrency(const std::vector<Item>& items) {
  std::vector<std::pair<uint64_t, int>> edges;
  for (const Item& i : items) {
    if (i.end == i.start) continue;
    edges.push_back({i.start, +1});
    edges.push_back({i.end, -1});
  }
  std::sort(edges.begin(), edges.end());  // at equal times the end (-1) comes first
  int open = 0, most = 0;
  for (const auto& e : edges) most = std::max(most, open += e.second);
  return most;
}

// Places |items| in the given order and checks that no lane holds two that overlap.
std::vector<int> PlaceAll(const std::vector<Item>& items, LaneAllocator* lanes) {
  std::vector<int> lane_of;
  std::map<int, std::vector<Item>> by_lane;
  for (const Item& i : items) {
    int lane = lanes->Place(i.start, i.end, false);
    for (const Item& other : by_lane[lane]) {
      EXPECT_TRUE(other.end <= i.start || i.end <= other.start)
          << "lane " << lane << " holds [" << other.start << "," << other.end << ") and [" << i.start << ","
          << i.end << ")";
    }
    by_lane[lane].push_back(i);
    lane_of.push_back(lane);
  }
  return lane_of;
}

TEST(LaneAllocatorTest, SequentialItemsShareTheFirstLane) {
  LaneAllocator lanes;
  EXPECT_EQ(lanes.Place(0, 10, false), 0);
  EXPECT_EQ(lanes.Place(10, 20, false), 0);  // free once its last slice ended, at its end
  EXPECT_EQ(lanes.Place(25, 30, false), 0);
  EXPECT_EQ(lanes.lanes(), 1);
}

TEST(LaneAllocatorTest, ConcurrentItemsGetLanesAndTheLaneFreedFirstIsReused) {
  LaneAllocator lanes;
  EXPECT_EQ(lanes.Place(0, 100, false), 0);
  EXPECT_EQ(lanes.Place(10, 50, false), 1);
  EXPECT_EQ(lanes.Place(20, 40, false), 2);
  // Lanes 1 and 2 are both free at 60; lane 2 freed first (at 40).
  EXPECT_EQ(lanes.Place(60, 70, false), 2);
  EXPECT_EQ(lanes.Place(61, 80, false), 1);
  EXPECT_EQ(lanes.lanes(), 3);
}

TEST(LaneAllocatorTest, StartOrderUsesTheFewestLanesThereCanBe) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Item> items;
    for (int i = 0; i < 400; ++i) {
      uint64_t start = rng() % 10000, len = 1 + rng() % 300;
      items.push_back({start, start + len});
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    LaneAllocator lanes;
    PlaceAll(items, &lanes);
    EXPECT_EQ(lanes.lanes(), MaxConcurrency(items)) << "round " << round;
  }
}

TEST(LaneAllocatorTest, AnyOrderNeverOverlapsOnALane) {
  std::mt19937_64 rng(11);
  std::vector<Item> items;
  for (int i = 0; i < 2000; ++i) {
    uint64_t start = rng() % 50000, len = rng() % 500;
    items.push_back({start, start + len});
  }
  // Completion order, the order events reach the layout.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.end < b.end; });
  LaneAllocator lanes;
  PlaceAll(items, &lanes);
  EXPECT_GE(lanes.lanes(), MaxConcurrency(items));
}

TEST(LaneAllocatorTest, AZeroLengthTailKeepsTheNextItemOffTheLane) {
  LaneAllocator lanes;
  EXPECT_EQ(lanes.Place(0, 10, true), 0);   // e.g. a step whose last state is at its stop
  EXPECT_EQ(lanes.Place(10, 20, false), 1);  // at 10 it would sort before that state and hold it
  EXPECT_EQ(lanes.Place(11, 12, false), 0);  // after the tail, the lane is free again
  LaneAllocator zero;
  EXPECT_EQ(zero.Place(5, 5, true), 0);
  EXPECT_EQ(zero.Place(5, 9, false), 1);
}

TEST(LaneAllocatorTest, AStopBeforeTheStartIsAZeroLengthItem) {
  LaneAllocator lanes;
  EXPECT_EQ(lanes.Place(10, 3, false), 0);
  EXPECT_EQ(lanes.Place(10, 12, false), 1);
  EXPECT_EQ(lanes.Place(12, 13, false), 0);
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
