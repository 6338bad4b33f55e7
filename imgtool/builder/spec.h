// The build spec: a JSON file that declares an image (see examples/golden/spec.json and
// the "Spec reference" in imgtool/builder/README.md). Parsing is strict: an unknown key
// or a wrong type is an error naming its JSON path ("$.layers[0].files[1].mode"), and
// every rule that can be checked without touching the disk is checked here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/layer.h"
#include "fs/hashed_file.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "ref/reference.h"

namespace imgtool::build {

struct FileSpec {
  std::string src;                   // relative to the layer root; the last component may be a glob
  std::string dest;                  // absolute in-image path; a trailing "/" means "into this folder"
  std::optional<uint32_t> mode;      // for regular files
  std::optional<uint32_t> dir_mode;  // for folders
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool allow_setuid = false;
  // Not from JSON: set for package staging trees, whose modes are kept as unpacked.
  bool keep_modes = false;
  std::vector<oci::Platform> platforms;  // only in these images; empty: every platform (spec_platforms.h)
  std::string where;                     // "$.layers[0].files[1]"
};

// A package input of a layer: a .deb, a wheel, or a wheel already installed on this
// machine (taken from its files, pinned by its dist-info RECORD).
enum class PackageKind { kDeb, kWheel, kInstalledWheel };
const char* PackageKindName(PackageKind k);  // "deb", "wheel", "installed-wheel"

struct PackageSpec {
  PackageKind kind = PackageKind::kDeb;
  std::string src;  // deb, wheel: absolute path of the package file (a URL's: set when fetched)
  std::string url;  // deb, wheel: src when it is http://, https:// or file:// (builder/fetch.h)
  // deb, wheel from a URL: the download, hashed to the pin by fetch and read through this
  // descriptor from then on (never reopened by its name in the cache). Set when fetched.
  std::shared_ptr<const fs::HashedFile> fetched;
  // deb, wheel: src as written in the spec, a URL without its userinfo (a password in it
  // is for the download only: this is what records, the lock, the SBOM and messages show);
  // installed: dist_info as written.
  std::string given;
  oci::Digest sha256;         // deb, wheel: required pin of the file's bytes
  std::string name;           // expected Package: / METADATA Name:
  std::string version;        // expected Version:
  bool allow_setuid = false;  // deb
  std::string prefix;         // wheel, installed: in-image folder, relative ("usr/lib/python3/dist-packages")
  std::string dist_info;      // installed: absolute path of the *.dist-info folder
  std::string site_root;      // installed: absolute folder RECORD paths resolve under
  std::string strip_prefix;   // installed: RECORD path prefix dropped on this machine ("nvidia/cu13/")
  std::optional<oci::Digest> record_sha256;  // installed: optional pin of RECORD's bytes
  std::vector<oci::Platform> platforms;      // only in these images; empty: every platform
  std::string where;                         // "$.layers[0].debs[1]"
};

struct LayerSpec {
  std::string name;
  std::string root;  // absolute folder that sources are confined to
  std::vector<FileSpec> files;
  std::vector<PackageSpec> packages;     // debs, then wheels, then installed_wheels, in spec order
  std::vector<oci::Platform> platforms;  // only in these images; empty: every platform
  std::string where;
};

struct UserSpec {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string group;  // defaults to name
  std::string home;   // defaults to /home/<name>
  std::string shell = "/sbin/nologin";
};

// The base image: scratch, or an image pinned by digest in a layout (oci:, oci-archive:,
// paths made absolute) or a registry (docker://, kept in the download cache).
struct BaseSpec {
  bool scratch = true;
  ref::Reference reference;  // always carries the digest; a docker:// tag beside it is kept
  oci::Digest digest;        // the digest the spec pins (an index's when it names one)
  bool registry() const { return !scratch && ref::IsRegistry(reference); }
};

struct Spec {
  std::string dir;     // folder of the spec file: relative paths resolve against it
  oci::Digest digest;  // sha256 of the spec file's bytes
  BaseSpec base;
  oci::Platform platform{"linux", "amd64", ""};
  // A multi-platform spec's platforms: the build writes an index with one image each
  // (spec_platforms.h). Empty: one image, for `platform`.
  std::vector<oci::Platform> platforms;
  UserSpec user;
  std::optional<archive::Compression> compression;
  std::vector<LayerSpec> layers;
  std::map<std::string, std::string> env;
  std::string workdir;
  std::optional<std::vector<std::string>> entrypoint;
  std::optional<std::vector<std::string>> cmd;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> stack;  // cuda, cudnn, nccl, cublas, driver -> version
};

Result<Spec> LoadSpec(const std::string& path);
// `dir` must be absolute; `name` is used in messages.
Result<Spec> ParseSpec(std::string_view raw, const std::string& dir, const std::string& name);

// Label key under which each stack pin is published ("org.imgtool.stack.cuda").
std::string StackLabel(const std::string& component);

}  // namespace imgtool::build
