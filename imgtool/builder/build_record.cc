#include "builder/build_record.h"

#include "archive/layer.h"
#include "builder/base_spec.h"

namespace imgtool::build {

namespace {

// Which compressor wrote a layer of ours: its bytes are a function of the tar stream and
// these fields (imgtool/archive/README.md). Base layers are someone else's: none.
oci::Json CompressorJson(const std::string& media_type) {
  auto c = archive::CompressionFromMediaType(media_type);
  if (!c.ok()) return nullptr;
  archive::CompressorInfo info = archive::DescribeCompressor(*c);
  return {{"name", info.name}, {"version", info.version}, {"mode", info.mode}};
}

}  // namespace

namespace {

using oci::Json;

// One image's part of the record: its base as resolved for its platform, its inputs, its
// outputs.
Json ImageRecord(const Spec& spec, const ImageResult& image) {
  Json in = Json::array();
  for (const auto& i : image.inputs) {
    Json entry = {{"layer", i.layer}, {"path", i.path}, {"digest", i.digest.str()}, {"size", i.size}};
    if (!i.toolchain.empty()) entry["toolchain"] = i.toolchain;
    in.push_back(std::move(entry));
  }
  Json layers = Json::array();
  for (const auto& l : image.layers) {
    Json layer = {{"name", l.name},
                  {"digest", l.descriptor.digest.str()},
                  {"diff_id", l.diff_id.str()},
                  {"size", l.descriptor.size},
                  {"mediaType", l.descriptor.media_type}};
    if (l.name != "base") layer["compressor"] = CompressorJson(l.descriptor.media_type);
    layers.push_back(layer);
  }
  Json base = Json("scratch");
  if (!spec.base.scratch) {
    base = {{"digest", spec.base.digest.str()}, {"manifest", image.base_manifest.str()}};
    if (std::string source = BaseSource(spec.base); !source.empty()) base["source"] = source;
  }
  return {{"base", base},
          {"inputs", in},
          {"outputs",
           {{"manifest", oci::DescriptorToJson(image.manifest)},
            {"config", oci::DescriptorToJson(image.config)},
            {"layers", layers}}}};
}

}  // namespace

Result<std::string> BuildRecordJson(const Spec& spec, const BuildResult& result, int64_t epoch,
                                    const std::string& compression) {
  Json j = {{"recordVersion", 1},
            {"tool", std::string("imgtool ") + IMGTOOL_VERSION},
            {"sourceDateEpoch", epoch},
            {"compression", compression},
            {"spec", {{"digest", spec.digest.str()}}}};
  if (!result.is_index && result.images.size() == 1) {
    j.update(ImageRecord(spec, result.images[0]));
  } else {
    Json images = Json::array();
    for (const auto& image : result.images) {
      Json one = ImageRecord(spec, image);
      one["platform"] = oci::PlatformString(image.platform);
      images.push_back(std::move(one));
    }
    j["outputs"] = {{"index", oci::DescriptorToJson(result.manifest)}};
    j["images"] = std::move(images);
  }
  auto s = oci::CanonicalJson(j);
  if (!s.ok()) return s.error();
  return *s + "\n";
}

}  // namespace imgtool::build
