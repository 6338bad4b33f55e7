#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "fs/atomic_file.h"
#include "fs/own_file.h"
#include "fs/safe_open.h"
#include "layout/layout_reader.h"
#include "layout/layout_repository.h"
#include "layout/layout_sink.h"
#include "layout/layout_writer.h"
#include "layout/oci_archive.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"

namespace imgtool::layout {

namespace {

// Writes a one-layer image (the "layer" is an arbitrary blob: layouts do not look inside).
oci::Descriptor WriteImage(LayoutWriter& w, const std::string& tag, const std::string& layer_bytes) {
  auto layer = w.WriteBlob(layer_bytes, oci::kMediaTypeLayerGzip);
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  oci::AppendLayerToConfig(cfg, oci::Digest::Of(layer_bytes), {"1970-01-01T00:00:00Z", "t", false});
  auto config = w.WriteBlob(*oci::CanonicalJson(cfg), oci::kMediaTypeConfig);
  oci::Manifest m;
  m.config = *config;
  m.layers.push_back(*layer);
  auto manifest = w.WriteBlob(*oci::SerializeManifest(m), oci::kMediaTypeManifest);
  EXPECT_TRUE(w.SetTag(*manifest, tag).ok());
  return *manifest;
}

Result<oci::Node> Open(const std::string& dir, const std::string& tag) {
  return LayoutRepository(dir, "oci:" + dir, "img").Open(tag);
}

std::set<std::string> Tags(const std::string& dir) {
  std::set<std::string> tags;
  auto index = ReadIndex(dir);
  EXPECT_TRUE(index.ok()) << index.error().message;
  if (!index.ok()) return tags;
  for (const auto& d : index->manifests) {
    auto it = d.annotations.find(std::string(oci::kAnnotationRefName));
    if (it != d.annotations.end()) tags.insert(it->second);
  }
  return tags;
}

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

// Names in blobs/sha256 that are not 64 hex digits: temporaries left behind.
int Leftovers(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/blobs/sha256")) {
    n += e.path().filename().string().size() != 64;
  }
  return n;
}

oci::Descriptor LayerDescriptor(const std::string& bytes) {
  oci::Descriptor d;
  d.media_type = std::string(oci::kMediaTypeLayerGzip);
  d.digest = oci::Digest::Of(bytes);
  d.size = static_cast<int64_t>(bytes.size());
  return d;
}

Result<ImportedBlob> ImportFile(const LayoutWriter& w, const std::string& path, const oci::Descriptor& d,
                                ContentCheck check) {
  auto fd = fs::OpenRegular(path);
  if (!fd.ok()) return fd.error();
  return w.ImportBlob(fd->get(), d, check);
}

}  // namespace

TEST(Layout, WriteThenReadBack) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path() + "/img");
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto desc = WriteImage(*w, "v1", "layer-bytes");
  EXPECT_EQ(*fs::ReadSmallFile(dir->path() + "/img/oci-layout"), R"({"imageLayoutVersion":"1.0.0"})");
  auto node = Open(dir->path() + "/img", "v1");
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->image);
  EXPECT_EQ(node->image->digest(), desc.digest);
  EXPECT_FALSE(node->image->is_artifact());
  ASSERT_EQ(node->image->layers().size(), 1u);
  EXPECT_EQ(node->image->layers()[0]->diff_id(), oci::Digest::Of("layer-bytes"));
  // The only image is found without a tag, and by digest.
  EXPECT_TRUE(Open(dir->path() + "/img", "").ok());
  EXPECT_TRUE(Open(dir->path() + "/img", desc.digest.str()).ok());
}

TEST(Layout, RetaggingReplacesAndOtherTagsStay) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  WriteImage(*w, "a", "one");
  WriteImage(*w, "b", "two");
  auto second = WriteImage(*w, "a", "three");
  auto index = ReadIndex(dir->path());
  ASSERT_EQ(index->manifests.size(), 2u);
  EXPECT_EQ(ResolveManifest(dir->path(), "a")->digest, second.digest);
  auto ambiguous = ResolveManifest(dir->path(), "");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().message, dir->path() + ": holds 2 images; name one with :TAG (b, a)");
  EXPECT_EQ(ResolveManifest(dir->path(), "c").error().kind, ErrorKind::kNotFound);
}

// The image opens (its digest and raw bytes need no config); its config is the error.
TEST(Layout, DamagedConfigIsAnIntegrityError) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto desc = WriteImage(*w, "v1", "x");
  auto manifest = oci::ParseManifest(*fs::ReadSmallFile(w->BlobPath(desc.digest)), "m");
  std::string cfg_path = w->BlobPath(manifest->config.digest);
  std::string cfg = *fs::ReadSmallFile(cfg_path);
  cfg[cfg.size() / 2] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(cfg_path, cfg).ok());
  auto img = Open(dir->path(), "v1");
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_EQ(img->descriptor.digest, desc.digest);
  const auto& config = img->image->config();
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(config.error().message.find("config: oci:" + dir->path() + ": blob " + manifest->config.digest.str() +
                                        ": content hashes to"),
            std::string::npos)
      << config.error().message;
}

TEST(Layout, RefusesAFolderThatIsNotALayout) {
  auto dir = fs::TempDir::Create("layout-test-");
  ASSERT_TRUE(fs::WriteFileAtomic(dir->path() + "/notes.txt", "mine").ok());
  auto w = LayoutWriter::Open(dir->path());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "output " + dir->path() + ": folder is not empty and is not an OCI layout (no oci-layout file)");
}

// The red team's class 2: a blob that is not a regular file inside the layout is
// refused by name, never read, sent or waited on.
TEST(Layout, BlobsThatAreNotRegularFilesAreRefused) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto desc = WriteImage(*w, "v1", "layer");
  auto manifest = oci::ParseManifest(*fs::ReadSmallFile(w->BlobPath(desc.digest)), "m");
  std::string layer = w->BlobPath(manifest->layers[0].digest);
  ASSERT_TRUE(fs::WriteFileAtomic(dir->path() + "/secret", "layer").ok());
  LayoutStore store(dir->path(), "oci:x");
  struct Case {
    std::string kind;
    std::function<int()> make;
  };
  std::vector<Case> cases = {
      {"a symlink", [&] { return ::symlink((dir->path() + "/secret").c_str(), layer.c_str()); }},
      {"a FIFO", [&] { return ::mkfifo(layer.c_str(), 0600); }},
      {"a folder", [&] { return ::mkdir(layer.c_str(), 0700); }},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(::unlink(layer.c_str()) == 0 || ::rmdir(layer.c_str()) == 0, true);
    ASSERT_EQ(c.make(), 0) << c.kind;
    auto r = store.OpenBlob(manifest->layers[0]);
    ASSERT_FALSE(r.ok()) << c.kind;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << c.kind;
    EXPECT_NE(r.error().message.find("is " + c.kind + "; refused"), std::string::npos) << r.error().message;
  }
}

TEST(Layout, ASinkRefusesABlobWhoseSizeOrContentLies) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto store = std::make_shared<oci::MemoryStore>();
  oci::Descriptor real = store->Add("twelve bytes", oci::kMediaTypeLayerGzip);
  oci::Descriptor short_size = real;
  short_size.size = 5;
  oci::Descriptor other = real;
  other.digest = oci::Digest::Of("something else");
  // The memory store serves by digest; point `other` at the real bytes.
  auto sink = LayoutSink::Open(dir->path() + "/out", "oci:out");
  ASSERT_TRUE(sink.ok());
  auto lied = (*sink)->PutBlob(oci::Blob(store, short_size), nullptr);
  ASSERT_FALSE(lied.ok());
  EXPECT_EQ(lied.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(lied.error().message.find("more than the 5 bytes its descriptor names"), std::string::npos)
      << lied.error().message;
  EXPECT_FALSE(fs::Exists(BlobPathIn(dir->path() + "/out", real.digest)));
  EXPECT_TRUE((*sink)->PutBlob(oci::Blob(store, real), nullptr).ok());
  EXPECT_TRUE(fs::Exists(BlobPathIn(dir->path() + "/out", real.digest)));
}

TEST(Layout, AnIndexChildIsFoundByDigest) {
  auto dir = fs::TempDir::Create("layout-test-");
  auto w = LayoutWriter::Open(dir->path());
  auto child = WriteImage(*w, "tmp", "child");
  oci::Index idx;
  child.platform = oci::Platform{"linux", "arm64", ""};
  idx.manifests.push_back(child);
  auto index_desc = w->WriteBlob(*oci::SerializeIndex(idx), oci::kMediaTypeIndex);
  ASSERT_TRUE(w->SetTag(*index_desc, "tmp").ok());  // replaces the child's tag: only the index is listed
  auto node = Open(dir->path(), "tmp");
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->is_index());
  auto entry = node->index->ChildFor(oci::Platform{"linux", "arm64", "v8"});
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  EXPECT_TRUE(node->index->Child(*entry).ok());
  EXPECT_TRUE(Open(dir->path(), child.digest.str()).ok());
  auto none = node->index->ChildFor(oci::Platform{"linux", "amd64", ""});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no image for linux/amd64 (it has linux/arm64)"), std::string::npos);
}

// Issue 24 (b): writers racing on one layout, each through its own LayoutWriter (as
// separate imgtool processes would be), into a folder none of them finds existing. Every
// tag must survive: index.json is only changed under the layout's lock. Runs under TSan
// (scripts/test --sanitize thread).
TEST(LayoutIndexLock, ConcurrentWritersKeepEveryTag) {
  auto dir = fs::TempDir::Create("layout-lock-test-");
  const std::string layout = dir->path() + "/shared";
  constexpr int kThreads = 8, kTags = 10;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto w = LayoutWriter::Open(layout);
      if (!w.ok()) {
        errors[t] = w.error().message;
        return;
      }
      for (int i = 0; i < kTags; ++i) {
        std::string tag = "t" + std::to_string(t) + "-" + std::to_string(i);
        WriteImage(*w, tag, "layer of " + tag);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  std::set<std::string> tags = Tags(layout);
  EXPECT_EQ(tags.size(), static_cast<size_t>(kThreads * kTags));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kTags; ++i) EXPECT_TRUE(tags.count("t" + std::to_string(t) + "-" + std::to_string(i)));
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(Open(layout, "t" + std::to_string(t) + "-9").ok());
  EXPECT_EQ(Leftovers(layout), 0);
}

// An update that fails leaves index.json as it was (and the lock released).
TEST(LayoutIndexLock, AFailedEditWritesNothing) {
  auto dir = fs::TempDir::Create("layout-lock-test-");
  auto w = LayoutWriter::Open(dir->path());
  WriteImage(*w, "v1", "layer");
  std::string before = *fs::ReadSmallFile(dir->path() + "/index.json");
  Status st = w->UpdateIndex([](oci::Index& index) {
    index.manifests.clear();
    return Status(MakeError(ErrorKind::kInvalidInput, "no"));
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(*fs::ReadSmallFile(dir->path() + "/index.json"), before);
  EXPECT_TRUE(w->SetTag(*ResolveManifest(dir->path(), "v1"), "v2").ok());
  EXPECT_EQ(Tags(dir->path()), (std::set<std::string>{"v1", "v2"}));
}

// A failed command removes a layout its Open created, but never one where a concurrent
// writer committed an image meanwhile.
TEST(LayoutIndexLock, AFailedCreatorKeepsAnotherWritersImage) {
  auto dir = fs::TempDir::Create("layout-lock-test-");
  const std::string alone = dir->path() + "/alone", shared = dir->path() + "/shared";
  auto a = LayoutWriter::Open(alone);
  ASSERT_TRUE(a.ok() && a->created());
  WriteImage(*a, "mine", "layer");
  a->RemoveIfCreated();
  EXPECT_FALSE(fs::Exists(alone));

  auto creator = LayoutWriter::Open(shared);
  auto other = LayoutWriter::Open(shared);
  ASSERT_TRUE(creator->created());
  EXPECT_FALSE(other->created());
  WriteImage(*creator, "mine", "layer");
  WriteImage(*other, "theirs", "their layer");
  creator->RemoveIfCreated();
  EXPECT_EQ(Tags(shared), (std::set<std::string>{"mine", "theirs"}));
  EXPECT_TRUE(Open(shared, "theirs").ok());
}

// Issue 24 (a): a file imported into a layout is linked only when nobody else can write
// it and its bytes are its digest; anything else is copied and hashed as copied, and
// other bytes are refused whatever the caller claimed.
TEST(LayoutImport, LinksOnlyOurCheckedFilesAndHashesEveryCopy) {
  auto dir = fs::TempDir::Create("layout-import-test-");
  auto w = LayoutWriter::Open(dir->path() + "/out");
  const std::string bytes = "the layer's bytes";
  const oci::Descriptor d = LayerDescriptor(bytes);
  const std::string src = dir->path() + "/src", forged = dir->path() + "/forged";
  ASSERT_TRUE(fs::WriteOwnFile(src, bytes).ok());
  ASSERT_TRUE(fs::WriteOwnFile(forged, std::string(bytes.size(), 'S')).ok());

  auto refused = ImportFile(*w, forged, d, ContentCheck::kHash);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kIntegrity) << refused.error().message;
  EXPECT_FALSE(w->HasBlob(d.digest, d.size));

  auto linked = ImportFile(*w, src, d, ContentCheck::kHash);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_TRUE(linked->linked);
  EXPECT_EQ(linked->bytes_hashed, bytes.size());
  EXPECT_EQ(StatOf(w->BlobPath(d.digest)).st_ino, StatOf(src).st_ino);
  ASSERT_EQ(::unlink(w->BlobPath(d.digest).c_str()), 0);

  // Others can write these: copied, never linked, and hashed even when "known good".
  ASSERT_EQ(::chmod(src.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(forged.c_str(), 0666), 0);
  auto forged_copy = ImportFile(*w, forged, d, ContentCheck::kKnownGood);
  ASSERT_FALSE(forged_copy.ok());
  EXPECT_EQ(forged_copy.error().kind, ErrorKind::kIntegrity);
  EXPECT_FALSE(w->HasBlob(d.digest, d.size));
  auto copied = ImportFile(*w, src, d, ContentCheck::kKnownGood);
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_FALSE(copied->linked);
  EXPECT_EQ(copied->bytes_hashed, bytes.size());
  EXPECT_NE(StatOf(w->BlobPath(d.digest)).st_ino, StatOf(src).st_ino);
  EXPECT_EQ(*fs::ReadSmallFile(w->BlobPath(d.digest)), bytes);

  oci::Descriptor longer = d;
  longer.size += 1;
  auto wrong_size = ImportFile(*w, src, longer, ContentCheck::kKnownGood);
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_EQ(wrong_size.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(Leftovers(dir->path() + "/out"), 0);
}

// Threads placing the same blob at once (copy --jobs, two builds): each under its own
// temporary name, all succeed, none is left behind.
TEST(LayoutImport, ConcurrentImportsOfOneBlobAllSucceed) {
  auto dir = fs::TempDir::Create("layout-import-test-");
  auto w = LayoutWriter::Open(dir->path() + "/out");
  const std::string bytes(1 << 16, 'x');
  const oci::Descriptor d = LayerDescriptor(bytes);
  const std::string src = dir->path() + "/src";
  ASSERT_TRUE(fs::WriteOwnFile(src, bytes).ok());
  constexpr int kThreads = 8;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto r = ImportFile(*w, src, d, t % 2 ? ContentCheck::kHash : ContentCheck::kKnownGood);
        if (!r.ok()) errors[t] = r.error().message;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_TRUE(w->HasBlob(d.digest, d.size));
  EXPECT_EQ(Leftovers(dir->path() + "/out"), 0);
}

// An archive is an output too: a blob that is a symlink (to a secret) or whose bytes are
// not its name is refused while archiving, and no archive is written.
TEST(OciArchiveWrite, RefusesASymlinkOrAlteredBlob) {
  auto dir = fs::TempDir::Create("archive-write-test-");
  const std::string layout = dir->path() + "/l", archive = dir->path() + "/a.tar";
  auto w = LayoutWriter::Open(layout);
  auto desc = WriteImage(*w, "v1", "layer bytes");
  ASSERT_TRUE(WriteOciArchive(layout, archive).ok());
  ASSERT_EQ(::unlink(archive.c_str()), 0);
  const std::string layer = w->BlobPath(oci::Digest::Of("layer bytes"));
  const std::string secret = dir->path() + "/secret";
  ASSERT_TRUE(fs::WriteFileAtomic(secret, "SECRET-KEY!").ok());  // the layer's size

  ASSERT_EQ(::unlink(layer.c_str()), 0);
  ASSERT_EQ(::symlink(secret.c_str(), layer.c_str()), 0);
  Status linked = WriteOciArchive(layout, archive);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.error().message.find("is a symlink; refused"), std::string::npos) << linked.error().message;
  EXPECT_FALSE(fs::Exists(archive));

  ASSERT_EQ(::unlink(layer.c_str()), 0);
  ASSERT_TRUE(fs::WriteFileAtomic(layer, "SECRET-KEY!").ok());
  Status altered = WriteOciArchive(layout, archive);
  ASSERT_FALSE(altered.ok());
  EXPECT_EQ(altered.error().kind, ErrorKind::kIntegrity) << altered.error().message;
  EXPECT_FALSE(fs::Exists(archive));
  EXPECT_EQ(Leftovers(layout), 0);
}

namespace {

struct TarEntry {
  std::string name;
  unsigned type = AE_IFREG;
  std::string content;  // a link's target for AE_IFLNK
};

// A tar of `entries` as other tools write them (names as given: "./" prefixes, folders).
void WriteTar(const std::string& path, const std::vector<TarEntry>& entries) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& t : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, t.name.c_str());
    archive_entry_set_filetype(e, t.type);
    archive_entry_set_perm(e, t.type == AE_IFDIR ? 0755 : 0644);
    if (t.type == AE_IFLNK) archive_entry_set_symlink(e, t.content.c_str());
    if (t.type == AE_IFREG) archive_entry_set_size(e, static_cast<la_int64_t>(t.content.size()));
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK);
    if (t.type == AE_IFREG) archive_write_data(a, t.content.data(), t.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

// The entries of `layout` (a folder, written by LayoutWriter) under `prefix`.
std::vector<TarEntry> LayoutEntries(const std::string& layout, const std::string& prefix) {
  std::vector<TarEntry> out{{prefix + "blobs/", AE_IFDIR, ""}, {prefix + "blobs/sha256/", AE_IFDIR, ""}};
  for (const auto& e : std::filesystem::directory_iterator(layout + "/blobs/sha256")) {
    const std::string name = e.path().filename().string();
    out.push_back({prefix + "blobs/sha256/" + name, AE_IFREG, *fs::ReadSmallFile(e.path().string())});
  }
  for (const char* top : {"index.json", "oci-layout"}) {
    out.push_back({prefix + top, AE_IFREG, *fs::ReadSmallFile(layout + "/" + top)});
  }
  return out;
}

}  // namespace

// Issue 25: containerd's export and docker save (Docker 25 on) write an OCI layout with
// docker's manifest.json (and repositories) beside it, some tools with "./" before every
// name. The layout is read; the rest is skipped unread and never written to disk.
TEST(OciArchiveExtract, DockersFilesBesideTheLayoutAreSkipped) {
  auto dir = fs::TempDir::Create("archive-read-test-");
  auto w = LayoutWriter::Open(dir->path() + "/l");
  auto desc = WriteImage(*w, "latest", "layer bytes");
  for (const std::string prefix : {"", "./"}) {
    auto entries = LayoutEntries(dir->path() + "/l", prefix);
    if (!prefix.empty()) entries.insert(entries.begin(), TarEntry{"./", AE_IFDIR, ""});
    entries.push_back({prefix + "manifest.json", AE_IFREG, R"([{"Config":"blobs/sha256/x","RepoTags":["a:b"]}])"});
    entries.push_back({prefix + "repositories", AE_IFREG, R"({"a":{"b":"x"}})"});
    entries.push_back({prefix + "0123abcd/", AE_IFDIR, ""});  // a legacy layer folder
    entries.push_back({prefix + "0123abcd/json", AE_IFREG, "{}"});
    entries.push_back({prefix + "blobs/sha512/", AE_IFDIR, ""});  // another algorithm
    const std::string archive = dir->path() + "/a" + std::to_string(prefix.size()) + ".tar";
    WriteTar(archive, entries);
    const std::string out = dir->path() + "/out" + std::to_string(prefix.size());
    ASSERT_TRUE(fs::MakeDirs(out).ok());
    Status st = ExtractOciArchive(archive, out);
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_FALSE(fs::Exists(out + "/manifest.json"));
    EXPECT_FALSE(fs::Exists(out + "/repositories"));
    EXPECT_FALSE(fs::Exists(out + "/0123abcd"));
    auto node = Open(out, "latest");
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->descriptor.digest, desc.digest);
  }
}

// What skipping must not loosen: a link is refused wherever it stands (none is ever
// created), and so are names that are absolute, climb out or hold control characters,
// and a layout name of the wrong type; each named, nothing written outside the folder.
TEST(OciArchiveExtract, LinksAndHostileNamesAreStillRefused) {
  auto dir = fs::TempDir::Create("archive-read-test-");
  auto w = LayoutWriter::Open(dir->path() + "/l");
  WriteImage(*w, "latest", "layer bytes");
  const std::vector<std::pair<TarEntry, std::string>> cases = {
      {{"manifest.json", AE_IFLNK, "/etc/passwd"},
       "entry 'manifest.json' is not part of an OCI layout (not a regular file or folder)"},
      {{"0123abcd/layer.tar", AE_IFLNK, "../blobs/sha256/x"}, "(not a regular file or folder)"},
      {{"fifo", AE_IFIFO, ""}, "(not a regular file or folder)"},
      {{"../escape", AE_IFREG, "x"}, "entry '../escape' is not part of an OCI layout (a name with a '..' part)"},
      {{"./a/../../escape", AE_IFREG, "x"}, "(a name with a '..' part)"},
      {{"/etc/x", AE_IFREG, "x"}, "(an absolute name)"},
      {{"x\nimgtool: OK", AE_IFREG, "x"}, "(a control character in its name)"},
      {{"./index.json/", AE_IFDIR, ""},
       "entry 'index.json' is not part of an OCI layout (a folder where the layout has a file)"},
      {{"blobs/sha256", AE_IFREG, "x"}, "(a file where the layout has a folder)"},
  };
  int n = 0;
  for (const auto& [bad, why] : cases) {
    auto entries = LayoutEntries(dir->path() + "/l", "");
    entries.push_back(bad);
    const std::string archive = dir->path() + "/bad" + std::to_string(n) + ".tar";
    const std::string out = dir->path() + "/out" + std::to_string(n++) + "/x";
    WriteTar(archive, entries);
    ASSERT_TRUE(fs::MakeDirs(out).ok());
    Status st = ExtractOciArchive(archive, out);
    ASSERT_FALSE(st.ok()) << bad.name;
    EXPECT_EQ(st.error().kind, ErrorKind::kInvalidInput);
    EXPECT_NE(st.error().message.find(why), std::string::npos) << st.error().message;
    EXPECT_FALSE(fs::Exists(out + "/../escape"));
    EXPECT_FALSE(fs::Exists(out + "/manifest.json"));
  }
}

}  // namespace imgtool::layout
