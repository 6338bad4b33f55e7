#include "sign/store.h"

#include "layout/layout_reader.h"
#include "layout/oci_archive.h"
#include "remote/transfer.h"
#include "sign/signature_image.h"

namespace imgtool::sign {

namespace {

std::string FolderName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return fs::BaseName(path);
}

ref::Reference Tagged(const ref::Reference& ref, const std::string& tag) {
  ref::Reference r = ref;
  r.tag = tag;
  r.digest.clear();
  return r;
}

}  // namespace

Result<SignatureStore> SignatureStore::Open(const ref::Reference& ref, const remote::RegistryOptions& opts) {
  SignatureStore s;
  s.ref_ = ref;
  s.opts_ = opts;
  if (ref.transport == ref::Transport::kDocker) {
    auto opened = remote::OpenRemoteImage(ref, opts);
    if (!opened.ok()) return opened.error();
    s.image_ = opened->image->digest();
    s.identity_ = ref.host + "/" + ref.repository;
    s.layout_dir_ = opened->layout_dir;
    s.temp_ = opened->extracted;
    return s;
  }
  auto opened = layout::OpenImage(ref);
  if (!opened.ok()) return opened.error();
  s.image_ = opened->image->digest();
  s.identity_ = FolderName(ref.path);
  s.layout_dir_ = opened->layout_dir;
  s.temp_ = opened->extracted;
  return s;
}

Result<std::vector<SignatureLayer>> SignatureStore::Read(std::string_view suffix) const {
  std::string tag = ArtifactTag(image_, suffix);
  if (ref_.transport != ref::Transport::kDocker) return ReadSignatureImage(layout_dir_, tag);
  auto t = fs::TempDir::Create("imgtool-sig-");
  if (!t.ok()) return t.error();
  ref::Reference local;
  local.path = t->path() + "/sig";
  local.tag = tag;
  remote::TransferOptions topts;
  topts.source = opts_;
  auto copied = remote::Copy(Tagged(ref_, tag), local, topts);
  if (!copied.ok()) {
    if (copied.error().kind == ErrorKind::kNotFound) return std::vector<SignatureLayer>();
    return copied.error().Context("reading " + tag);
  }
  return ReadSignatureImage(local.path, tag);
}

Result<bool> SignatureStore::Append(std::string_view suffix, const SignatureLayer& layer,
                                    const std::function<bool(const SignatureLayer&)>& already_there) const {
  if (ref_.transport == ref::Transport::kOciArchive) {
    return MakeError(ErrorKind::kInvalidInput, ref_.str() + ": an oci-archive is read-only here; sign an oci: layout");
  }
  auto existing = Read(suffix);
  if (!existing.ok()) return existing.error();
  for (const auto& l : *existing) {
    if (already_there(l)) return false;
  }
  std::vector<SignatureLayer> layers = *existing;
  layers.push_back(layer);
  std::string tag = ArtifactTag(image_, suffix);
  if (ref_.transport == ref::Transport::kOciLayout) {
    auto d = WriteSignatureImage(ref_.path, tag, layers);
    if (!d.ok()) return d.error().Context("writing " + tag);
    return true;
  }
  // Registry: build the new signature image in a temporary layout, then push it.
  auto t = fs::TempDir::Create("imgtool-sig-");
  if (!t.ok()) return t.error();
  ref::Reference local;
  local.path = t->path() + "/sig";
  local.tag = tag;
  auto d = WriteSignatureImage(local.path, tag, layers);
  if (!d.ok()) return d.error().Context("writing " + tag);
  remote::TransferOptions topts;
  topts.destination = opts_;
  auto pushed = remote::Copy(local, Tagged(ref_, tag), topts);
  if (!pushed.ok()) return pushed.error().Context("pushing " + tag);
  return true;
}

}  // namespace imgtool::sign
