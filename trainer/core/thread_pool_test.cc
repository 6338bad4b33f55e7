#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace trainer {

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int n : {0, 1, 7, 100}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (int round = 0; round < 3; ++round) pool.ParallelFor(n, [&](int i) { hits[static_cast<size_t>(i)]++; });
      for (auto& h : hits) EXPECT_EQ(h.load(), 3);
    }
  }
}

}  // namespace trainer
