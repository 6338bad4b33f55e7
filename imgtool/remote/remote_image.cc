// OpenRemoteImage: inspect and digest of a docker:// image without pulling its layers.
// The manifest (exact bytes) and the config (hashed while it streams) go into a
// temporary layout, which the layout reader then serves like any local image.
#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_writer.h"
#include "oci/canonical_json.h"
#include "remote/transfer.h"

namespace imgtool::remote {

namespace {

std::string TopRef(const ref::Reference& r) {
  if (!r.digest.empty()) return r.digest;
  return r.tag.empty() ? "latest" : r.tag;
}

}  // namespace

Result<layout::OpenedImage> OpenRemoteImage(const ref::Reference& ref, const RegistryOptions& opts) {
  auto reg = Registry::Connect(ref.host, opts);
  if (!reg.ok()) return reg.error().Context(ref.str());
  auto m = (*reg)->GetManifest(ref.repository, TopRef(ref));
  if (!m.ok()) return m.error().Context(ref.str());
  auto t = fs::TempDir::Create("imgtool-remote-");
  if (!t.ok()) return t.error();
  layout::OpenedImage out;
  out.extracted = std::make_shared<fs::TempDir>(std::move(*t));
  out.layout_dir = out.extracted->path();
  auto w = layout::LayoutWriter::Open(out.layout_dir);
  if (!w.ok()) return w.error();
  auto j = oci::Json::parse(m->bytes, nullptr, false);
  if (j.is_object() && j.contains("manifests")) {
    return MakeError(ErrorKind::kInvalidInput,
                     ref.str() + ": " + m->digest.str() + " is an image index; name one of its images by @digest");
  }
  auto cfg = oci::DescriptorFromJson(j.value("config", oci::Json()), "manifest: $.config");
  if (!cfg.ok()) return cfg.error().Context(ref.str());
  fs::AtomicFile f;
  IMGTOOL_TRY(w->OpenBlobFile(f));
  IMGTOOL_TRY((*reg)->FetchBlob(ref.repository, *cfg, f, nullptr));
  IMGTOOL_TRY(w->CommitBlob(f, cfg->digest));
  auto desc = w->WriteBlob(m->bytes, m->media_type);
  if (!desc.ok()) return desc.error();
  IMGTOOL_TRY(w->SetTag(*desc, ""));
  auto img = layout::OpenLayoutImage(out.layout_dir, "");
  if (!img.ok()) return img.error().Context(ref.str());
  out.image = *img;
  return out;
}

}  // namespace imgtool::remote
