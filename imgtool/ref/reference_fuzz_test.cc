// Random inputs never crash the parser, and whatever it accepts prints a canonical text
// that parses back to the same Reference. Seeded, so a failure reproduces.
#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oci/quote.h"
#include "ref/reference.h"

namespace imgtool::ref {

namespace {

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Mostly the grammar's own characters, so that many inputs get deep into it; now and then
// a whole digest or any byte at all.
std::string RandomReference(std::mt19937& rng) {
  static const std::string kPrefixes[] = {"docker://", "oci:", "oci-archive:", "", "docker:/", "docker-archive:"};
  static const std::string kLetters[] = {"a", "b", "z", "0", "9", "app", "v1"};
  static const std::vector<std::string> kPieces =
      Words(". _ __ - -- / / : : @ A [ ] ::1 localhost docker.io index.docker.io library sha256: sha512: latest 5000");
  const std::string digest = "sha256:" + std::string(64, 'e');
  std::uniform_int_distribution<int> pick(0, 99);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string s = kPrefixes[pick(rng) % std::size(kPrefixes)];
  int pieces = pick(rng) % 16;
  for (int i = 0; i < pieces; ++i) {
    int p = pick(rng);
    if (p < 3) {
      s += digest;
    } else if (p < 6) {
      s += static_cast<char>(byte(rng));  // any byte, NUL and high bytes included
    } else if (p < 60) {
      s += kLetters[p % std::size(kLetters)];
    } else {
      s += kPieces[p % kPieces.size()];
    }
  }
  return s;
}

}  // namespace

TEST(ReferenceFuzz, AcceptedTextsRoundTripAndRefusalsSayWhat) {
  std::mt19937 rng(20240611);
  int accepted = 0, docker = 0;
  constexpr int kRuns = 50000;
  for (int i = 0; i < kRuns; ++i) {
    std::string text = RandomReference(rng);
    auto r = ParseReference(text);
    if (!r.ok()) {
      ASSERT_EQ(r.error().kind, ErrorKind::kInvalidInput) << text;
      // The text as it was, quoted and escaped (control characters never reach a message raw).
      ASSERT_EQ(r.error().message.rfind("image reference " + oci::Quoted(text, '\'') + ": ", 0), 0u)
          << r.error().message;
      for (char c : r.error().message) ASSERT_FALSE(c >= 0 && c < 0x20) << r.error().message;
      continue;
    }
    ++accepted;
    if (r->transport == Transport::kDocker) {
      ++docker;
      ASSERT_FALSE(r->host.empty()) << text;
      ASSERT_FALSE(r->repository.empty()) << text;
    }
    auto again = ParseReference(r->str());
    ASSERT_TRUE(again.ok()) << text << " -> " << r->str() << ": " << again.error().message;
    ASSERT_EQ(*again, *r) << text << " -> " << r->str();
    ASSERT_EQ(again->str(), r->str()) << text;
  }
  // Not vacuous: the generator reaches accepted references of every kind.
  EXPECT_GT(accepted, kRuns / 20);
  EXPECT_GT(docker, kRuns / 50);
}

}  // namespace imgtool::ref
