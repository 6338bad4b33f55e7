#include "build/build_record.h"

#include "build/base_spec.h"

namespace imgtool::build {

Result<std::string> BuildRecordJson(const Spec& spec, const BuildResult& result, const std::vector<RecordInput>& inputs,
                                    int64_t epoch, const std::string& compression) {
  using oci::Json;
  Json in = Json::array();
  for (const auto& i : inputs) {
    in.push_back({{"layer", i.layer}, {"path", i.path}, {"digest", i.digest.str()}, {"size", i.size}});
  }
  Json layers = Json::array();
  for (const auto& l : result.layers) {
    layers.push_back({{"name", l.name},
                      {"digest", l.descriptor.digest.str()},
                      {"diff_id", l.diff_id.str()},
                      {"size", l.descriptor.size},
                      {"mediaType", l.descriptor.media_type}});
  }
  Json base = Json("scratch");
  if (!spec.base.scratch) {
    base = {{"digest", spec.base.digest.str()}, {"manifest", result.base_manifest.str()}};
    if (std::string source = BaseSource(spec.base); !source.empty()) base["source"] = source;
  }
  Json j = {{"recordVersion", 1},
            {"tool", std::string("imgtool ") + IMGTOOL_VERSION},
            {"sourceDateEpoch", epoch},
            {"compression", compression},
            {"spec", {{"digest", spec.digest.str()}}},
            {"base", base},
            {"inputs", in},
            {"outputs",
             {{"manifest", oci::DescriptorToJson(result.manifest)},
              {"config", oci::DescriptorToJson(result.config)},
              {"layers", layers}}}};
  auto s = oci::CanonicalJson(j);
  if (!s.ok()) return s.error();
  return *s + "\n";
}

}  // namespace imgtool::build
