// Helpers for the pkg tests: run a shell command, write fixture files. Fixtures are built
// by the real tools (dpkg-deb, Python's tarfile/zipfile) so the tests read what the world
// ships, not what this code expects.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "fs/atomic_file.h"

namespace imgtool::pkg::testing {

struct ShResult {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

inline ShResult Sh(const std::string& cmd) {
  ShResult r;
  FILE* p = ::popen(("(" + cmd + ") 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline void Write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  ASSERT_TRUE(fs::MakeDirs(fs::DirName(path)).ok()) << path;
  std::ofstream(path, std::ios::binary) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

inline std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// The folder holding the test binary (the build dir), for caches that outlive a run.
inline std::string BinaryDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  return fs::DirName(std::string(buf, static_cast<size_t>(n)));
}

}  // namespace imgtool::pkg::testing
