// Manifests, indexes and image configs (imgtool/oci/manifest.h, image_config.h): the
// documents every backend hands over as bytes. The same input goes to each parser, and
// to the sniffing that guesses a missing media type. Inputs may be nesting recipes
// (fuzz_util.h, ExpandNesting): an index or config nested far past kMaxJsonDepth.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "oci/image.h"
#include "oci/image_config.h"
#include "oci/manifest.h"
#include "oci/media_types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::oci;
  const std::string doc = imgtool::fuzz::NestedInput(data, size);
  std::string_view raw = doc;
  if (auto m = ParseManifest(raw, "manifest"); m.ok()) {
    // What we accept we can write; the written form reads back.
    if (auto bytes = SerializeManifest(*m); bytes.ok() && !ParseManifest(*bytes, "again").ok()) std::abort();
  }
  if (auto i = ParseIndex(raw, "index"); i.ok()) {
    if (auto bytes = SerializeIndex(*i); bytes.ok() && !ParseIndex(*bytes, "again").ok()) std::abort();
  }
  if (auto reading = ReadConfig(kMediaTypeConfig, raw, "config"); reading.ok()) {
    // The accessors read a base image's config, which is as foreign as the bytes.
    const Json& config = reading->config;
    (void)ConfigDiffIds(config);
    (void)ConfigField(config, "os");
    (void)ConfigPlatform(config);
    (void)ConfigUser(config);
    for (const char* f : {"Env", "Entrypoint", "Cmd"}) (void)ConfigStringList(config, f);
    (void)ConfigLabels(config);
  }
  (void)ParsePlatform(std::string(raw));
  (void)SniffManifestMediaType(std::string(raw));
  // Named as each kind, the way every verb reads a manifest (issue 25).
  for (std::string_view named : {kMediaTypeManifest, kMediaTypeDockerManifestList}) {
    (void)ManifestMediaType(Descriptor{std::string(named), Digest::Of(doc), 0, {}, {}, {}}, doc, "manifest");
  }
  return 0;
}
