// Packages as layer inputs: Debian .deb files and Python wheels, unpacked into a staging
// folder with every path-safety rule enforced, their metadata checked against the pin
// (name, version), and the records package managers and scanners read (dpkg's status
// stanza, .list and .md5sums; the wheel's dist-info) produced.
//
// Not here: fetching (build/fetch), deciding where in the image files go (build/plan),
// or writing layers (archive). The staging folder is then packed like any other source.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::pkg {

// Limits for hostile archives. A package whose entries would exceed them is refused.
struct UnpackLimits {
  uint64_t max_total_bytes = 16ull << 30;  // absolute cap on what one package may unpack
  // Refuse when the unpacked total exceeds `declared * max_expansion` (declared: the
  // deb's Installed-Size, the wheel's zip headers' uncompressed sizes).
  uint64_t max_expansion = 4;
  uint64_t max_entries = 1u << 20;
};

// One file of an unpacked package, relative to the staging root ("usr/lib/x.so").
struct PackageFile {
  std::string path;
  oci::Digest sha256;   // regular files only
  std::string md5_hex;  // regular files only (dpkg's md5sums)
  uint64_t size = 0;
};

struct DebPackage {
  std::string name;                             // Package:
  std::string version;                          // Version:
  std::string architecture;                     // Architecture:
  std::string control;                          // the control stanza as shipped, without a trailing blank line
  std::vector<std::string> maintainer_scripts;  // preinst, postinst, ... present in control.tar
  std::vector<std::string> conffiles;           // control.tar's conffiles ("/etc/x"); dpkg tracks them apart
  std::vector<std::string> paths;               // every path unpacked ("usr", "usr/lib", ...), in tar order
  std::vector<PackageFile> files;               // regular files, sorted by path
};

// Unpacks the data archive (data.tar.gz / .xz / .zst / uncompressed) of `deb_path` into
// `staging` (an existing empty folder), with modes as shipped (setuid/setgid kept only
// if `allow_setuid`), symlinks and hardlinks kept. Refused with kInvalidInput naming the
// package and the entry: absolute paths, "..", an entry that would be written through
// a symlink, a hardlink to a path outside the package or not yet unpacked, device
// nodes/fifos/sockets, duplicate entries, sizes beyond `limits`. A .deb that is not an
// ar archive with debian-binary 2.0, control.tar.* and data.tar.* is kInvalidInput.
//
// The package file is never opened by name here: `deb_file` is read once, from its start
// and in order (Read only, even where the ar reader skips), so a caller that hashes the
// reader (fs::HashingReader) has the digest of exactly the bytes unpacked and checks its
// pin on that before using the staging folder. `name` starts every error ("debs/x.deb").
// The reader's own errors are returned as they are.
Result<DebPackage> UnpackDeb(oci::Reader& deb_file, const std::string& name, const std::string& staging,
                             const UnpackLimits& limits, bool allow_setuid = false);
// The same from a path, opened once (fs::OpenRegular: never a FIFO), for tools and tests.
Result<DebPackage> UnpackDeb(const std::string& deb_path, const std::string& staging, const UnpackLimits& limits,
                             bool allow_setuid = false);

// dpkg's records for an installed package, as dpkg itself would write them:
//   status stanza: the control stanza with "Status: install ok installed" inserted after
//   Package:, ending in a blank line; info/<name>.list: "/." then "/path" per path;
//   info/<name>.md5sums: "<md5>  path" per regular file. (Multi-arch "same" packages use
//   <name>:<arch>.list; handle that.) Conffiles are tracked as dpkg tracks them: a
//   "Conffiles:" field (" /etc/x <md5>" lines) closes the status stanza, and they are left
//   out of md5sums, so `dpkg --verify` checks them either way.
std::string DpkgStatusStanza(const DebPackage& deb);
std::string DpkgList(const DebPackage& deb);
std::string DpkgMd5sums(const DebPackage& deb);
std::string DpkgInfoName(const DebPackage& deb);  // "libc6:amd64" or "jq"

struct WheelPackage {
  std::string name;                // METADATA Name:
  std::string version;             // METADATA Version:
  std::string dist_info;           // "nvidia_nccl_cu13-2.28.9.dist-info"
  oci::Digest record_digest;       // sha256 of the RECORD file's bytes (pins an installed wheel)
  std::vector<PackageFile> files;  // every file listed in RECORD, sorted by path
};

// Unpacks a wheel (a zip) into `staging`, then checks every file against RECORD
// (sha256=<urlsafe base64, no padding>,size): a file missing from RECORD (other than
// RECORD itself and RECORD.jws/.p7s), a RECORD entry missing from the zip, a hash or
// size mismatch are kIntegrity errors naming the wheel and the file. Same path-safety
// rules as UnpackDeb (zip entries with absolute paths, "..", symlink tricks, duplicates,
// sizes beyond limits). Symlinks in the zip are refused (installers never create them);
// files get pip's modes: 0755 if the zip gave any execute bit, else 0644; folders 0755.
// md5_hex stays empty for wheel files.
//
// The zip reader seeks (its central directory is at the end), so `wheel_file` must read
// at offsets (ReadAt) over `size` bytes that do not change while it is read: a caller
// that pins the wheel hashes it first as an fs::HashedFile and unpacks HashedFile::Open()
// (the same bytes, never the file's name again). `name` starts every error.
Result<WheelPackage> UnpackWheel(oci::Reader& wheel_file, uint64_t size, const std::string& name,
                                 const std::string& staging, const UnpackLimits& limits);
// The same from a path, opened once (fs::OpenRegular), for tools and tests.
Result<WheelPackage> UnpackWheel(const std::string& wheel_path, const std::string& staging, const UnpackLimits& limits);

// An already-installed wheel: `dist_info_dir` is its *.dist-info folder. Files named in
// RECORD are looked up under `site_root` after replacing the RECORD path prefix
// `strip_prefix` (e.g. "nvidia/cu13/") — machines that flattened the wheel's layout —
// and each is hashed and checked against RECORD. Returns the files with their host
// paths in `host_paths` (same order as files). Nothing is copied.
//
// Each file is opened once, without following it (a symlink there is refused), and
// hashed from that descriptor; `modes` gives its permission bits from the same open. The
// layer that copies these files later reads them again: it must check the bytes it
// writes against `wheel.files[i].sha256` (archive::Entry::expect_sha256), since the
// file may have changed in between.
//
// RECORD paths under "<dist-info name>/" are looked up in `dist_info_dir` itself. An entry
// whose file is absent is a kIntegrity error, except bytecode ("__pycache__/", "*.pyc"),
// "__init__.py" and files under a hidden component (".metadata/"): installers and
// flattening machines drop those. Such absent entries, and hashless bytecode entries, are
// listed in `skipped` and not in `wheel.files`. Paths with ".." or "/" at the front (pip's
// "../../bin/x" scripts) are refused: nothing outside `site_root` can be pinned.
struct InstalledWheel {
  WheelPackage wheel;
  std::vector<std::string> host_paths;
  std::vector<uint32_t> modes;       // st_mode & 07777 of each file as hashed (same order)
  std::vector<std::string> skipped;  // RECORD paths neither returned nor verified (see above)
};
Result<InstalledWheel> ReadInstalledWheel(const std::string& dist_info_dir, const std::string& site_root,
                                          const std::string& strip_prefix);

// Parses "Key: value" stanzas (deb control, wheel METADATA headers): first value per key,
// continuation lines joined with "\n" (their one leading space dropped). Stops at the first
// blank line: the end of a stanza, or where METADATA's body starts.
std::map<std::string, std::string> ParseStanza(const std::string& text);

}  // namespace imgtool::pkg
