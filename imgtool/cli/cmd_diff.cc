// imgtool diff A B: which config fields, layers and paths differ between two images;
// between two indexes, the same platform by platform (open both -> pair the images by
// platform -> check::DiffImages each pair).
#include <iostream>
#include <map>

#include "check/diff.h"
#include "cli/output.h"
#include "cli/remote_flags.h"

namespace imgtool::cli {

namespace {

struct DiffFlags {
  std::string a;
  std::string b;
  std::string platform;
  bool json = false;
  RemoteFlags remote;
};

oci::Json DiffJson(const check::ImageDiff& d) {
  oci::Json config = oci::Json::array();
  for (const auto& c : d.config) config.push_back({{"path", c.path}, {"a", c.a}, {"b", c.b}});
  oci::Json layers = oci::Json::array();
  for (const auto& l : d.layers) {
    oci::Json changes = oci::Json::array();
    for (const auto& c : l.changes)
      changes.push_back({{"path", "/" + c.path}, {"field", c.field}, {"a", c.a}, {"b", c.b}});
    layers.push_back({{"index", l.index}, {"a", l.a_digest}, {"b", l.b_digest}, {"changes", changes}});
  }
  return {{"a", d.a_digest}, {"b", d.b_digest}, {"identical", d.identical()}, {"config", config}, {"layers", layers}};
}

void PrintDiff(const check::ImageDiff& d, const std::string& a, const std::string& b) {
  if (d.identical()) {
    std::cout << "identical: " << d.a_digest << "\n";
    return;
  }
  std::cout << "--- " << a << " " << d.a_digest << "\n+++ " << b << " " << d.b_digest << "\n";
  for (const auto& c : d.config) std::cout << "config " << c.path << ": " << c.a << " -> " << c.b << "\n";
  for (const auto& l : d.layers) {
    std::cout << "layer " << l.index << ": " << (l.a_digest.empty() ? "(none)" : l.a_digest) << " -> "
              << (l.b_digest.empty() ? "(none)" : l.b_digest) << "\n";
    for (const auto& c : l.changes) {
      if (c.field == "added") {
        std::cout << "  + /" << c.path << " (" << c.b << ")\n";
      } else if (c.field == "removed") {
        std::cout << "  - /" << c.path << " (" << c.a << ")\n";
      } else {
        std::cout << "  ~ /" << c.path << " " << c.field << ": " << c.a << " -> " << c.b << "\n";
      }
    }
  }
}

// The images of an index by platform ("linux/arm64/v8"); entries without one are skipped.
std::map<std::string, oci::Descriptor> ByPlatform(const oci::ImageIndex& idx) {
  std::map<std::string, oci::Descriptor> out;
  for (const auto& c : idx.children()) {
    if (c.platform) out.emplace(oci::PlatformString(*c.platform), c);
  }
  return out;
}

// One platform of two indexes: its diff, or a note that only one side has it.
Result<oci::Json> DiffPlatform(const DiffFlags& f, const std::string& platform, const oci::Node& a, const oci::Node& b,
                               const std::map<std::string, oci::Descriptor>& pa,
                               const std::map<std::string, oci::Descriptor>& pb, bool& same) {
  auto ia = pa.find(platform), ib = pb.find(platform);
  if (ia == pa.end() || ib == pb.end()) {
    same = false;
    const char* side = ia == pa.end() ? "b" : "a";
    if (!f.json) std::cout << "platform " << platform << ": only in " << (ia == pa.end() ? f.b : f.a) << "\n";
    return oci::Json{{"platform", platform}, {"identical", false}, {"onlyIn", side}};
  }
  auto ca = a.index->Child(ia->second);
  if (!ca.ok()) return ca.error();
  auto cb = b.index->Child(ib->second);
  if (!cb.ok()) return cb.error();
  if (!ca->image || !cb->image) return MakeError(ErrorKind::kInvalidInput, "platform " + platform + ": not an image");
  auto d = check::DiffImages(*ca->image, *cb->image);
  if (!d.ok()) return d.error().Context("platform " + platform);
  same = same && d->identical();
  if (!f.json) {
    std::cout << "platform " << platform << ":\n";
    PrintDiff(*d, f.a, f.b);
  }
  oci::Json j = DiffJson(*d);
  j["platform"] = platform;
  return j;
}

int DiffIndexes(const DiffFlags& f, const oci::Node& a, const oci::Node& b) {
  auto pa = ByPlatform(*a.index), pb = ByPlatform(*b.index);
  std::map<std::string, bool> all;
  for (const auto& [p, d] : pa) all[p] = true;
  for (const auto& [p, d] : pb) all[p] = true;
  bool same = a.descriptor.digest == b.descriptor.digest;
  if (!f.json && same) std::cout << "identical: " << a.descriptor.digest.str() << "\n";
  oci::Json platforms = oci::Json::array();
  bool each_same = true;
  for (const auto& [p, unused] : all) {
    if (same) break;
    auto j = DiffPlatform(f, p, a, b, pa, pb, each_same);
    if (!j.ok()) return Fail(j.error());
    platforms.push_back(*j);
  }
  if (f.json) {
    PrintJson({{"a", a.descriptor.digest.str()},
               {"b", b.descriptor.digest.str()},
               {"identical", same},
               {"platforms", platforms}});
  }
  return same ? 0 : 1;
}

Result<oci::Node> OpenSide(const std::string& ref, const DiffFlags& f) {
  auto p = PlatformFlag(f.platform);
  if (!p.ok()) return p.error();
  auto opened = transport::Open(ref, ToRegistryOptions(f.remote));
  if (!opened.ok()) return opened.error();
  return transport::SelectPlatform(opened->node, *p);
}

int RunDiff(const DiffFlags& f) {
  auto a = OpenSide(f.a, f);
  if (!a.ok()) return Fail(a.error());
  auto b = OpenSide(f.b, f);
  if (!b.ok()) return Fail(b.error());
  if (a->is_index() && b->is_index()) return DiffIndexes(f, *a, *b);
  if (a->is_index() != b->is_index()) {
    return Fail(
        MakeError(ErrorKind::kInvalidInput,
                  (a->is_index() ? f.a : f.b) + " is an index and the other an image; pick one with --platform"));
  }
  auto d = check::DiffImages(*a->image, *b->image);
  if (!d.ok()) return Fail(d.error());
  if (f.json) {
    PrintJson(DiffJson(*d));
  } else {
    PrintDiff(*d, f.a, f.b);
  }
  return d->identical() ? 0 : 1;
}

}  // namespace

void AddDiffCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<DiffFlags>();
  CLI::App* cmd =
      app.add_subcommand("diff",
                         "Explain why two images differ: config fields (as JSON pointers), then each\n"
                         "differing layer and, inside it, each path whose presence, type, content digest,\n"
                         "mode, owner, mtime or link target changed. Two indexes are compared platform by\n"
                         "platform (a platform only one has is a difference). Exit 0 identical, 1 different.\n\n"
                         "Examples:\n  imgtool diff oci:ci-build:latest oci:my-build:latest\n"
                         "  imgtool diff oci:out/golden:multi docker://127.0.0.1:5000/golden:multi --json");
  cmd->add_option("a", f->a, "First image or index (oci:, oci-archive:, docker://)")->required();
  cmd->add_option("b", f->b, "Second image or index")->required();
  AddRemoteFlags(cmd, f->remote);
  cmd->add_option("--platform", f->platform, "Compare only the images for OS/ARCH[/VARIANT] of two indexes");
  cmd->add_flag("--json", f->json, "Print a JSON object");
  cmd->callback([f, &run] { run = [f] { return RunDiff(*f); }; });
}

}  // namespace imgtool::cli
