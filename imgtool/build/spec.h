// The build spec: a JSON file that declares an image (see examples/golden/spec.json and
// the "Spec reference" in imgtool/build/README.md). Parsing is strict: an unknown key
// or a wrong type is an error naming its JSON path ("$.layers[0].files[1].mode"), and
// every rule that can be checked without touching the disk is checked here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/layer.h"
#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"

namespace imgtool::build {

struct FileSpec {
  std::string src;   // relative to the layer root; the last component may be a glob
  std::string dest;  // absolute in-image path; a trailing "/" means "into this folder"
  std::optional<uint32_t> mode;      // for regular files
  std::optional<uint32_t> dir_mode;  // for folders
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool allow_setuid = false;
  std::string where;  // "$.layers[0].files[1]"
};

struct LayerSpec {
  std::string name;
  std::string root;  // absolute folder that sources are confined to
  std::vector<FileSpec> files;
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

struct BaseSpec {
  bool scratch = true;
  std::string layout;  // absolute folder of an OCI layout
  oci::Digest digest;  // manifest digest the base is pinned to
};

struct Spec {
  std::string dir;    // folder of the spec file: relative paths resolve against it
  oci::Digest digest;  // sha256 of the spec file's bytes
  BaseSpec base;
  oci::Platform platform{"linux", "amd64", ""};
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
