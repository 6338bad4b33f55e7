// The one cap on lists from outside (list_limit.h) where each list is read, and the
// counting store verify reports from.
#include <gtest/gtest.h>

#include "oci/counting_store.h"
#include "oci/image.h"
#include "oci/image_config.h"
#include "oci/list_limit.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "oci/repository.h"

namespace imgtool::oci {

namespace {

Descriptor Desc(int i) { return {std::string(kMediaTypeLayerGzip), Digest::Of(std::to_string(i)), 1, {}, {}}; }

bool Says(const Error& e, const std::string& text) { return e.message.find(text) != std::string::npos; }

}  // namespace

TEST(ListLimit, OverTheCapIsInvalidInputNamingTheList) {
  EXPECT_TRUE(CheckListLength(kMaxListEntries, "index x", "manifests").ok());
  Status over = CheckListLength(kMaxListEntries + 1, "index x", "manifests");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(over.error().message, "index x: 1001 manifests; imgtool reads at most 1000 (a cap on lists from outside)");
  EXPECT_EQ(DistinctDigests({Desc(1), Desc(2), Desc(1)}), 2u);
}

TEST(ListLimit, AManifestWithTooManyLayersIsRefusedBeforeItsLayersAreRead) {
  Manifest m;
  m.config = Desc(0);
  m.layers.assign(kMaxListEntries, Desc(1));
  EXPECT_TRUE(ParseManifest(*SerializeManifest(m), "m").ok());
  m.layers.push_back(Desc(2));
  auto refused = ParseManifest(*SerializeManifest(m), "m");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Says(refused.error(), "m: $.layers: 1001 layers")) << refused.error().message;
}

// An index is capped on the children a walk reads: one image named 3,000 times is one.
TEST(ListLimit, AnIndexIsCappedOnDistinctManifests) {
  auto store = std::make_shared<MemoryStore>();
  Json cfg = NewImageConfig("linux", "amd64");
  Manifest m;
  m.config = store->Add(*CanonicalJson(cfg), kMediaTypeConfig);
  auto image = store->Add(*SerializeManifest(m), kMediaTypeManifest);
  Index same;
  same.manifests.assign(3000, image);
  EXPECT_TRUE(OpenNode(store, store->Add(*SerializeIndex(same), kMediaTypeIndex)).ok());

  Index many;
  for (size_t i = 0; i <= kMaxListEntries; ++i) {
    many.manifests.push_back({std::string(kMediaTypeManifest), Digest::Of(std::to_string(i)), 2, {}, {}});
  }
  auto refused = OpenNode(store, store->Add(*SerializeIndex(many), kMediaTypeIndex));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidInput);
  EXPECT_TRUE(Says(refused.error(), "1001 distinct manifests; imgtool reads at most 1000")) << refused.error().message;
}

// Referrers are filtered by type before anything is fetched, each digest once, then capped.
TEST(ListLimit, ReferrersAreFilteredByTypeThenDedupedThenCapped) {
  const std::string bundle = "application/vnd.dev.sigstore.bundle.v0.3+json";
  Index index;
  for (int i = 0; i < 4000; ++i) {
    Descriptor d = Desc(i);
    d.artifact_type = i % 1000 == 0 ? bundle : "application/spdx+json";
    index.manifests.push_back(d);
    if (i % 1000 == 0) index.manifests.push_back(d);  // listed twice
  }
  auto found = ReferrersOfType(index, bundle, "referrers of x");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->size(), 4u);
  auto all = ReferrersOfType(index, "", "referrers of x");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().message,
            "referrers of x: 4000 referrers; imgtool reads at most 1000 (a cap on lists from outside)");
}

TEST(CountingStore, CountsEveryReadAndEveryByteHandedOut) {
  MemoryStore store;
  auto a = store.Add("hello", kMediaTypeConfig);
  CountingStore counted(store);
  ASSERT_TRUE(ReadBlob(counted, a, 100).ok());
  ASSERT_TRUE(counted.ReadManifest(a).ok());
  Descriptor missing = a;
  missing.digest = Digest::Of("other");
  EXPECT_FALSE(counted.OpenBlob(missing).ok());
  EXPECT_EQ(counted.counts().reads, 3u);
  EXPECT_EQ(counted.counts().bytes, 10u);
}

}  // namespace imgtool::oci
