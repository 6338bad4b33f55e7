// Package inputs of a layer, made ready for planning: a .deb or wheel is checked against
// its pin (the sha256 of the file, then the name and version its own metadata declares)
// and unpacked with imgtool/pkg into a staging folder that lives until the layer is
// written; an installed wheel is verified in place against its dist-info RECORD.
//
// A package file is opened once, and the digest compared with its pin is that of the
// bytes unpacked: a .deb is hashed while it streams into the unpacker, a wheel is hashed
// whole first (fs::HashedFile: the same descriptor, or a private copy where others can
// write the file) and the zip reader reads those bytes. A download is read through the
// descriptor fetch hashed (PackageSpec::fetched). So a file swapped or rewritten between
// the check and the unpack is either harmless or refused (exit 4), never unpacked.
//
// Not here: walking the staging tree into layer entries (plan.cc), the image-wide
// /var/lib/dpkg/status (dpkg_status.h), fetching URLs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "builder/spec.h"
#include "fs/atomic_file.h"
#include "oci/digest.h"
#include "oci/result.h"

namespace imgtool::build {

// A shared library a package puts in the image (for /etc/imgtool/stack.json).
struct PackageLibrary {
  std::string path;  // in-image, absolute ("/usr/lib/x86_64-linux-gnu/libnccl.so.2")
  oci::Digest sha256;
};

// What one package contributes to the image besides its files.
struct PackageRecord {
  PackageKind kind = PackageKind::kDeb;
  std::string name;  // as the package declares it
  std::string version;
  oci::Digest sha256;                     // the package file's; an installed wheel's RECORD digest
  uint64_t size = 0;                      // the package file's bytes; an installed wheel's files' total
  std::string source;                     // as the spec names it (src or dist_info)
  std::string status_stanza;              // debs: dpkg's status stanza
  std::vector<PackageLibrary> libraries;  // regular *.so* files, sorted by path
  std::string where;                      // "$.layers[0].debs[1]"
};

struct StagedPackage {
  PackageRecord record;
  // deb, wheel: the unpacked tree, whose root goes to `dest` in the image ("" is "/").
  std::shared_ptr<fs::TempDir> staging;
  std::string dest;
  // deb, wheel: staging-relative path -> sha256 of each regular file as it was unpacked;
  // the layer must read those bytes back (archive::Entry::expect_sha256).
  std::map<std::string, oci::Digest> staged_digests;
  // Entries that are not in the staging tree: dpkg's info/<pkg>.list and .md5sums
  // (inline content), or an installed wheel's files (host sources). `ids` is
  // index-aligned: the sha256 that identifies each entry's content for the layer cache.
  std::vector<archive::Entry> extra;
  std::vector<std::string> ids;
  // Lines for the build output ("jq 1.6-6 has maintainer scripts (postinst); they were not run").
  std::vector<std::string> notes;
  bool allow_setuid = false;
};

// The package file, opened once and hashed, against its pin (deb, wheel): what a warm
// build that does not unpack checks. exit-4 error naming both digests otherwise.
Result<oci::FileDigest> CheckPackageFile(const PackageSpec& spec);

// `staging_parent`: where staging folders are created ("" for $TMPDIR).
Result<StagedPackage> StagePackage(const PackageSpec& spec, const std::string& staging_parent);

// Tests only: called when a package file has been opened (before a byte of it is read)
// and, for a wheel, when it has been hashed (before it is unpacked), so a test can swap or
// rewrite the file there. Empty: none.
enum class PackageFileStage { kOpened, kHashed };
void SetPackageFileHookForTest(std::function<void(const PackageSpec&, PackageFileStage)> hook);

// PEP 503: lowercase, runs of '-', '_' and '.' become one '-' ("Nvidia_NCCL.cu13" -> "nvidia-nccl-cu13").
std::string NormalizeWheelName(const std::string& name);

}  // namespace imgtool::build
