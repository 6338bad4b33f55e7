#include "check/diff.h"

#include <cstdio>
#include <map>
#include <utility>

#include "archive/layer.h"

namespace imgtool::check {

namespace {

std::string Octal(uint32_t mode) {
  char buf[16];
  snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

const char* TypeName(archive::EntryType t) {
  switch (t) {
    case archive::EntryType::kFile:
      return "file";
    case archive::EntryType::kDir:
      return "folder";
    case archive::EntryType::kSymlink:
      return "symlink";
    case archive::EntryType::kHardlink:
      return "hardlink";
  }
  return "?";
}

std::vector<ConfigChange> DiffConfigs(const oci::Json& a, const oci::Json& b) {
  std::vector<ConfigChange> out;
  for (const auto& op : oci::Json::diff(a, b)) {
    std::string path = op["path"].get<std::string>();
    oci::Json av = a.contains(oci::Json::json_pointer(path)) ? a[oci::Json::json_pointer(path)] : oci::Json();
    oci::Json bv = op.contains("value") ? op["value"] : oci::Json();
    out.push_back({path, av.is_null() ? "" : av.dump(), bv.is_null() ? "" : bv.dump()});
  }
  return out;
}

void ComparePaths(const std::vector<archive::LayerFile>& a, const std::vector<archive::LayerFile>& b,
                  std::vector<PathChange>& out) {
  std::map<std::string, const archive::LayerFile*> am, bm;
  for (const auto& f : a) am[f.path] = &f;
  for (const auto& f : b) bm[f.path] = &f;
  for (const auto& [path, fa] : am) {
    auto it = bm.find(path);
    if (it == bm.end()) {
      out.push_back({path, "removed", TypeName(fa->type), ""});
      continue;
    }
    const archive::LayerFile* fb = it->second;
    if (fa->type != fb->type) out.push_back({path, "type", TypeName(fa->type), TypeName(fb->type)});
    if (fa->content_digest != fb->content_digest) {
      out.push_back({path, "content", fa->content_digest.str(), fb->content_digest.str()});
    } else if (fa->size != fb->size) {
      out.push_back({path, "size", std::to_string(fa->size), std::to_string(fb->size)});
    }
    if (fa->mode != fb->mode) out.push_back({path, "mode", Octal(fa->mode), Octal(fb->mode)});
    if (fa->uid != fb->uid || fa->gid != fb->gid) {
      out.push_back({path, "owner", std::to_string(fa->uid) + ":" + std::to_string(fa->gid),
                     std::to_string(fb->uid) + ":" + std::to_string(fb->gid)});
    }
    if (fa->mtime != fb->mtime) out.push_back({path, "mtime", std::to_string(fa->mtime), std::to_string(fb->mtime)});
    if (fa->link_target != fb->link_target) out.push_back({path, "link", fa->link_target, fb->link_target});
  }
  for (const auto& [path, fb] : bm) {
    if (!am.count(path)) out.push_back({path, "added", "", TypeName(fb->type)});
  }
}

oci::Json WithoutLayerFields(oci::Json config) {
  // rootfs and history change with every layer; the layer section reports those.
  config.erase("rootfs");
  config.erase("history");
  return config;
}

}  // namespace

Result<ImageDiff> DiffImages(const oci::Image& a, const oci::Image& b) {
  ImageDiff d;
  d.a_digest = a.digest().str();
  d.b_digest = b.digest().str();
  if (d.identical()) return d;
  if (!a.config().ok()) return a.config().error();
  if (!b.config().ok()) return b.config().error();
  d.config = DiffConfigs(WithoutLayerFields(*a.config()), WithoutLayerFields(*b.config()));
  auto la = a.layers();
  auto lb = b.layers();
  // Each layer blob is listed once, however many positions name it (with the same size:
  // another size is read, and refused, on its own).
  std::map<std::pair<oci::Digest, int64_t>, std::vector<archive::LayerFile>> listed_once;
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const oci::Layer* x = i < la.size() ? la[i].get() : nullptr;
    const oci::Layer* y = i < lb.size() ? lb[i].get() : nullptr;
    if (x && y && x->diff_id() == y->diff_id()) continue;
    LayerDiff ld;
    ld.index = i + 1;
    ld.a_digest = x ? x->digest().str() : "";
    ld.b_digest = y ? y->digest().str() : "";
    std::vector<archive::LayerFile> fa, fb;
    for (auto [layer, files] : {std::pair{x, &fa}, std::pair{y, &fb}}) {
      if (!layer) continue;
      auto key = std::make_pair(layer->digest(), layer->size());
      auto known = listed_once.find(key);
      if (known == listed_once.end()) {
        auto listed = archive::ListLayer(*layer);
        if (!listed.ok()) return listed.error().Context("layer " + std::to_string(i + 1));
        known = listed_once.emplace(key, std::move(*listed)).first;
      }
      *files = known->second;
    }
    ComparePaths(fa, fb, ld.changes);
    d.layers.push_back(std::move(ld));
  }
  return d;
}

}  // namespace imgtool::check
