// A layout folder (or an extracted oci-archive) as an oci::Repository: index.json's
// ref names are its tags.
#pragma once

#include <memory>
#include <string>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "oci/repository.h"

namespace imgtool::layout {

class LayoutRepository : public oci::Repository {
 public:
  // `name` starts messages ("oci:out/golden"); `identity` is what signatures name;
  // `keep` holds an extracted archive's temporary folder.
  LayoutRepository(std::string dir, std::string name, std::string identity,
                   std::shared_ptr<fs::TempDir> keep = nullptr);
  std::string name() const override { return name_; }
  std::string identity() const override { return identity_; }
  Result<oci::Descriptor> Resolve(const std::string& tag_or_digest) const override;
  Result<oci::Node> Open(const std::string& tag_or_digest) const override;
  Result<std::vector<std::string>> Tags() const override;
  std::shared_ptr<const oci::BlobStore> store() const override { return store_; }

 private:
  Result<oci::Descriptor> ByDigest(const oci::Digest& digest) const;

  std::string dir_, name_, identity_;
  std::shared_ptr<LayoutStore> store_;
};

// oci-archive:FILE, extracted into a private temporary folder that lives as long as the
// repository and every view opened from it (as containers/image reads archives).
Result<std::shared_ptr<LayoutRepository>> OpenArchiveRepository(const std::string& archive_path,
                                                                const std::string& name, const std::string& identity);

}  // namespace imgtool::layout
