#include "builder/sbom.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "fs/atomic_file.h"
#include "layout/layout_reader.h"
#include "layout/layout_writer.h"
#include "oci/canonical_json.h"
#include "oci/image_config.h"
#include "oci/media_types.h"

namespace imgtool::build {

namespace {

using oci::Json;

constexpr std::string_view kNoAssertion = "NOASSERTION";
constexpr std::string_view kImageId = "SPDXRef-image";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The value of `field` in a deb control stanza ("Architecture: amd64" -> "amd64").
std::string StanzaField(const std::string& stanza, const std::string& field) {
  std::string key = field + ":";
  size_t pos = 0;
  while (pos < stanza.size()) {
    size_t end = stanza.find('\n', pos);
    if (end == std::string::npos) end = stanza.size();
    std::string_view line(stanza.data() + pos, end - pos);
    if (line.substr(0, key.size()) == key) {
      std::string_view v = line.substr(key.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
      return std::string(v);
    }
    pos = end + 1;
  }
  return "";
}

// SPDXIDs allow only letters, digits, '.' and '-', and must be unique in a document. The
// elements' ids cannot meet by construction: "SPDXRef-DOCUMENT", "SPDXRef-index",
// "SPDXRef-image" and "SPDXRef-image-<platform>" (PlatformId), and packages'
// "SPDXRef-<kind>-..." (PackageIds), whose kinds are none of those words. Document()
// checks it again before anything is written.

// "SPDXRef-image-" + the platform, encoded injectively in SPDXID characters: letters and
// digits as they are, '/' as '-', any other byte as '.' and two hex digits. So
// linux/arm64/v8 and linux/arm64-v8 (once both "SPDXRef-image-linux-arm64-v8") are two
// ids, and a platform of letters, digits and '/' keeps the id it always had.
std::string PlatformId(const std::string& platform) {
  static const char* kHex = "0123456789ABCDEF";
  std::string id = "SPDXRef-image-";
  for (unsigned char c : platform) {
    if (std::isalnum(c)) {
      id += static_cast<char>(c);
    } else if (c == '/') {
      id += '-';
    } else {
      id += '.';
      id += kHex[c >> 4];
      id += kHex[c & 15];
    }
  }
  return id;
}

// Package SPDXIDs: "SPDXRef-<kind>-<name>-<version>[-<scope>]-<hash>", the readable part
// sanitized (other characters become '-') and the hash of the exact (kind, name,
// version, scope), so "1:2" and "1.2" are two ids. `scope` (a platform, in an index's
// document) keeps the same version for two platforms apart. The hash is 8 hex digits; the
// ids of a document whose readable part and 8 digits meet (a collision, or one ground
// on purpose) all get the whole 64, so every id stays unique and the others keep theirs.
class PackageIds {
 public:
  void Add(const PackageRecord& r, const std::string& scope) {
    Parts p = Split(r, scope);
    exact_by_short_[p.readable + "-" + p.hash.substr(0, 8)].insert(p.exact);
  }
  std::string Id(const PackageRecord& r, const std::string& scope) const {
    Parts p = Split(r, scope);
    std::string short_id = p.readable + "-" + p.hash.substr(0, 8);
    auto it = exact_by_short_.find(short_id);
    bool shared = it != exact_by_short_.end() && it->second.size() > 1;
    return "SPDXRef-" + (shared ? p.readable + "-" + p.hash : short_id);
  }

 private:
  struct Parts {
    std::string readable, exact, hash;
  };
  static Parts Split(const PackageRecord& r, const std::string& scope) {
    Parts p;
    p.readable = std::string(PackageKindName(r.kind)) + "-" + r.name + "-" + r.version;
    p.exact = std::string(PackageKindName(r.kind)) + '\0' + r.name + '\0' + r.version;
    if (!scope.empty()) {
      p.readable += "-" + scope;
      p.exact += '\0' + scope;
    }
    for (char& c : p.readable) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
    }
    p.hash = oci::Digest::Of(p.exact).hex();
    return p;
  }
  std::map<std::string, std::set<std::string>> exact_by_short_;
};

bool IsUrl(const std::string& s) { return s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0; }

Json PurlRef(const std::string& purl) {
  return {{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", purl}};
}

Json Sha256Checksum(const oci::Digest& d) {
  return Json::array({{{"algorithm", "SHA256"}, {"checksumValue", d.hex()}}});
}

// Fields every package carries: imgtool asserts nothing it has not checked.
Json BasePackage(const std::string& id, const std::string& name, const std::string& version) {
  return {{"SPDXID", id},
          {"name", name},
          {"versionInfo", version},
          {"downloadLocation", kNoAssertion},
          {"filesAnalyzed", false},
          {"licenseConcluded", kNoAssertion},
          {"licenseDeclared", kNoAssertion},
          {"copyrightText", kNoAssertion},
          {"supplier", kNoAssertion}};
}

Json PackageJson(const PackageRecord& r, const std::string& id) {
  Json p = BasePackage(id, r.name, r.version);
  if (IsUrl(r.source)) p["downloadLocation"] = r.source;
  p["checksums"] = Sha256Checksum(r.sha256);
  p["externalRefs"] = Json::array({PurlRef(PurlFor(r))});
  if (r.kind == PackageKind::kInstalledWheel) {
    // There is no package file: the build pinned the dist-info's RECORD, which names
    // the sha256 of every installed file.
    p["comment"] = "installed wheel; the SHA256 checksum is of its dist-info RECORD file";
  }
  return p;
}

Json Relationship(std::string_view from, std::string_view type, std::string_view to) {
  return {{"spdxElementId", from}, {"relationshipType", type}, {"relatedSpdxElement", to}};
}

}  // namespace

std::string SbomImageName(const std::map<std::string, std::string>& labels, const std::string& tag) {
  auto it = labels.find("org.opencontainers.image.title");
  if (it != labels.end() && !it->second.empty()) return it->second;
  return tag.empty() ? "image" : tag;
}

std::string PurlEncode(std::string_view component) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : component) {
    if (std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == '~' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string DebPurl(const std::string& name, const std::string& version, const std::string& arch) {
  std::string purl = "pkg:deb/debian/" + PurlEncode(Lower(name)) + "@" + PurlEncode(version);
  if (!arch.empty()) purl += "?arch=" + PurlEncode(Lower(arch));
  return purl;
}

std::string PypiPurl(const std::string& name, const std::string& version) {
  return "pkg:pypi/" + PurlEncode(NormalizeWheelName(name)) + "@" + PurlEncode(version);
}

std::string OciPurl(const std::string& name, const oci::Digest& manifest) {
  return "pkg:oci/" + PurlEncode(Lower(name)) + "@" + PurlEncode(manifest.str());
}

std::string PurlFor(const PackageRecord& r) {
  if (r.kind == PackageKind::kDeb) return DebPurl(r.name, r.version, StanzaField(r.status_stanza, "Architecture"));
  return PypiPurl(r.name, r.version);
}

namespace {

// The CONTAINER package of an image (or index) and its purl.
Json ContainerPackage(const std::string& id, const std::string& name, const oci::Digest& digest,
                      const std::string& purl) {
  Json p = BasePackage(id, name, digest.str());
  p["primaryPackagePurpose"] = "CONTAINER";
  p["checksums"] = Sha256Checksum(digest);
  p["externalRefs"] = Json::array({PurlRef(purl)});
  return p;
}

// Each package, sorted, as a package that `owner` CONTAINS. Refuses two with the same
// kind, name and version in one scope (they would share an SPDXID).
Status AddPackages(const std::vector<PackageRecord>& records, const std::string& owner, const std::string& scope,
                   const PackageIds& ids, Json& packages, Json& relationships) {
  std::vector<const PackageRecord*> sorted;
  for (const auto& p : records) sorted.push_back(&p);
  auto key = [](const PackageRecord* r) {
    return std::make_tuple(std::string_view(PackageKindName(r->kind)), std::string_view(r->name),
                           std::string_view(r->version), r->sha256.hex());
  };
  std::sort(sorted.begin(), sorted.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
  std::map<std::string, const PackageRecord*> seen;
  for (const PackageRecord* r : sorted) {
    std::string id = ids.Id(*r, scope);
    auto [it, fresh] = seen.emplace(id, r);
    if (!fresh) {
      return MakeError(ErrorKind::kInvalidInput, "SBOM: " + r->where + ": " + PackageKindName(r->kind) + " " + r->name +
                                                     " " + r->version + " is also installed by " + it->second->where);
    }
    packages.push_back(PackageJson(*r, id));
    relationships.push_back(Relationship(owner, "CONTAINS", id));
  }
  return Status::Ok();
}

// SPDX requires each SPDXID once per document: asserted over what is about to be written,
// whatever built the ids.
Status CheckUniqueIds(const Json& packages) {
  std::set<std::string> seen = {"SPDXRef-DOCUMENT"};
  for (const auto& p : packages) {
    const std::string& id = p["SPDXID"].get_ref<const std::string&>();
    if (!seen.insert(id).second) return MakeError(ErrorKind::kInternal, "SBOM: SPDXID " + id + " names two elements");
  }
  return Status::Ok();
}

// The document around its packages. A namespace per image (or index): two builds of one
// image share it, any change moves it.
Result<std::string> Document(const std::string& name, const oci::Digest& described, int64_t epoch,
                             const std::string& tool_version, Json packages, Json relationships) {
  IMGTOOL_TRY(CheckUniqueIds(packages));
  Json doc = {{"spdxVersion", "SPDX-2.3"},
              {"dataLicense", "CC0-1.0"},
              {"SPDXID", "SPDXRef-DOCUMENT"},
              {"name", name},
              {"documentNamespace", "https://imgtool.invalid/spdx/" + PurlEncode(name) + "/sha256-" + described.hex()},
              {"creationInfo",
               {{"created", oci::Rfc3339(epoch)}, {"creators", Json::array({"Tool: imgtool-" + tool_version})}}},
              {"packages", std::move(packages)},
              {"relationships", std::move(relationships)}};
  auto bytes = oci::CanonicalJson(doc);
  if (!bytes.ok()) return bytes.error().Context("SBOM");
  return *bytes + "\n";
}

}  // namespace

Result<std::string> SpdxJson(const SbomInput& in) {
  if (in.manifest.digest.empty()) return MakeError(ErrorKind::kInternal, "SBOM: no image manifest digest");
  const std::string& name = in.image_name;
  Json packages = Json::array(
      {ContainerPackage(std::string(kImageId), name, in.manifest.digest, OciPurl(name, in.manifest.digest))});
  Json relationships = Json::array({Relationship("SPDXRef-DOCUMENT", "DESCRIBES", kImageId)});
  PackageIds ids;
  for (const auto& r : in.packages) ids.Add(r, "");
  IMGTOOL_TRY(AddPackages(in.packages, std::string(kImageId), "", ids, packages, relationships));
  return Document(name, in.manifest.digest, in.epoch, in.tool_version, std::move(packages), std::move(relationships));
}

Result<std::string> SpdxIndexJson(const SbomIndexInput& in) {
  if (in.index.digest.empty()) return MakeError(ErrorKind::kInternal, "SBOM: no index digest");
  const std::string& name = in.image_name;
  const std::string index_id = "SPDXRef-index";
  Json packages = Json::array({ContainerPackage(index_id, name, in.index.digest, OciPurl(name, in.index.digest))});
  Json relationships = Json::array({Relationship("SPDXRef-DOCUMENT", "DESCRIBES", index_id)});
  PackageIds ids;
  for (const auto& image : in.images) {
    for (const auto& r : image.packages) ids.Add(r, oci::PlatformString(image.platform));
  }
  for (const auto& image : in.images) {
    std::string platform = oci::PlatformString(image.platform);
    std::string id = PlatformId(platform);
    std::string purl = OciPurl(name, image.manifest.digest) + "?arch=" + PurlEncode(image.platform.architecture);
    Json p = ContainerPackage(id, name, image.manifest.digest, purl);
    p["comment"] = "the " + platform + " image of the index";
    packages.push_back(std::move(p));
    relationships.push_back(Relationship(index_id, "CONTAINS", id));
    IMGTOOL_TRY(AddPackages(image.packages, id, platform, ids, packages, relationships));
  }
  return Document(name, in.index.digest, in.epoch, in.tool_version, std::move(packages), std::move(relationships));
}

std::string SbomTag(const oci::Digest& subject) { return "sha256-" + subject.hex() + ".sbom"; }

std::string SbomPathFor(const std::string& output_path) { return output_path + ".spdx.json"; }

Result<oci::Descriptor> WriteSbomArtifact(const std::string& layout_dir, const oci::Descriptor& subject,
                                          std::string_view spdx_json) {
  const std::string what = "storing SBOM in " + layout_dir;
  // Only an existing layout that holds the subject: LayoutWriter::Open would create one.
  auto index = layout::ReadIndex(layout_dir);
  if (!index.ok()) return index.error().Context("storing SBOM");
  if (!oci::IsManifestMediaType(subject.media_type)) {
    return MakeError(ErrorKind::kInvalidInput, what + ": subject " + subject.digest.str() + " is a " +
                                                   subject.media_type + ", not an image manifest");
  }
  auto subject_bytes = layout::ReadVerifiedBlob(layout_dir, subject);
  if (!subject_bytes.ok()) return subject_bytes.error().Context("storing SBOM: subject");

  auto writer = layout::LayoutWriter::Open(layout_dir);
  if (!writer.ok()) return writer.error().Context(what);
  auto desc = StageSbomArtifact(*writer, subject, spdx_json);
  if (!desc.ok()) return desc.error().Context(what);
  auto tagged = writer->SetTag(*desc, SbomTag(subject.digest));
  if (!tagged.ok()) return tagged.error().Context(what);
  return *desc;
}

Result<oci::Descriptor> StageSbomArtifact(layout::LayoutWriter& out, const oci::Descriptor& subject,
                                          std::string_view spdx_json) {
  auto empty = out.WriteBlob("{}", kMediaTypeOciEmpty);
  if (!empty.ok()) return empty.error();
  auto doc = out.WriteBlob(spdx_json, kMediaTypeSpdxJson);
  if (!doc.ok()) return doc.error();
  // Tools that pull artifacts (oras) name the file after the layer's title.
  doc->annotations["org.opencontainers.image.title"] = "sbom.spdx.json";

  // The subject is the manifest itself, not its entry in index.json (no tag).
  oci::Descriptor bare{subject.media_type, subject.digest, subject.size, {}, std::nullopt};
  Json manifest = {{"schemaVersion", 2},
                   {"mediaType", oci::kMediaTypeManifest},
                   {"artifactType", kMediaTypeSpdxJson},
                   {"config", oci::DescriptorToJson(*empty)},
                   {"layers", Json::array({oci::DescriptorToJson(*doc)})},
                   {"subject", oci::DescriptorToJson(bare)}};
  auto bytes = oci::CanonicalJson(manifest);
  if (!bytes.ok()) return bytes.error();
  return out.WriteBlob(*bytes, oci::kMediaTypeManifest);
}

Result<SbomOutputs> WriteSbom(const SbomInput& input, const std::string& layout_dir, const std::string& file_path) {
  auto json = SpdxJson(input);
  if (!json.ok()) return json.error();
  SbomOutputs out;
  out.path = file_path;
  out.document = {
      std::string(kMediaTypeSpdxJson), oci::Digest::Of(*json), static_cast<int64_t>(json->size()), {}, std::nullopt};
  auto artifact = WriteSbomArtifact(layout_dir, input.manifest, *json);
  if (!artifact.ok()) return artifact.error();
  out.artifact = *artifact;
  IMGTOOL_TRY(fs::WriteFileAtomic(file_path, *json));
  return out;
}

}  // namespace imgtool::build
