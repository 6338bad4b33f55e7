#include "builder/plan.h"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>

#include "fs/atomic_file.h"

namespace imgtool::build {

namespace {

using archive::Entry;
using archive::EntryType;

// What the planner learns about one source path; dev/ino find hardlinks.
struct Found {
  Entry entry;
  std::string input;  // relative to root
  dev_t dev = 0;
  ino_t ino = 0;
  nlink_t nlink = 1;
  int64_t mtime_ns = 0;
  // For a package's entries: what identifies the content in the cache key (a sha256),
  // instead of the staging file's mtime, inode and device.
  std::string content_id;
};

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

std::string StripSlashes(std::string p) {
  while (!p.empty() && p.front() == '/') p.erase(p.begin());
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

bool IsGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool Inside(const std::string& path, const std::string& root) {
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

Result<std::string> RealPath(const std::string& p, const std::string& where) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) == nullptr) {
    return MakeError(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInvalidInput,
                     where + ": " + p + ": " + std::strerror(errno));
  }
  return std::string(buf);
}

// Lists a folder's names, sorted, without "." and "..".
Result<std::vector<std::string>> SortedNames(const std::string& dir, const std::string& where) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return MakeError(ErrorKind::kInternal, where + ": opening " + dir + ": " + std::strerror(errno));
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class Walker {
 public:
  // `root`: the folder planning resolved `host` paths from (nothing below it followed
  // when the layer reads them: archive::Entry::source_root).
  Walker(const FileSpec& f, std::string root) : f_(f), root_(std::move(root)) {}

  // Adds `host` (lstat'ed, relative name `rel`) at in-image path `dest`, recursing into folders.
  Status Add(const std::string& host, const std::string& rel, const std::string& dest) {
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      return MakeError(ErrorKind::kNotFound, f_.where + ".src: " + rel + ": " + std::strerror(errno));
    }
    Found fd;
    fd.entry.path = dest;
    fd.entry.uid = f_.uid;
    fd.entry.gid = f_.gid;
    fd.dev = st.st_dev;
    fd.ino = st.st_ino;
    fd.nlink = st.st_nlink;
    fd.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if ((st.st_mode & 06000) && !f_.allow_setuid && !S_ISDIR(st.st_mode)) {
      return Bad(f_.where, rel + " has setuid/setgid bits; add \"allow_setuid\": true if that is intended");
    }
    if (S_ISREG(st.st_mode)) {
      fd.entry.type = EntryType::kFile;
      fd.entry.mode = f_.keep_modes ? (st.st_mode & 07777) : f_.mode ? *f_.mode : ((st.st_mode & 0111) ? 0755 : 0644);
      if (f_.allow_setuid && !f_.mode) fd.entry.mode |= st.st_mode & 06000;
      fd.entry.size = static_cast<uint64_t>(st.st_size);
      fd.entry.source = host;
      fd.entry.source_root = root_;
      fd.input = rel;
    } else if (S_ISLNK(st.st_mode)) {
      fd.entry.type = EntryType::kSymlink;
      fd.entry.mode = 0777;
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlink(host.c_str(), target.data(), target.size());
      if (n < 0) return MakeError(ErrorKind::kInternal, f_.where + ": readlink " + rel + ": " + std::strerror(errno));
      target.resize(static_cast<size_t>(n));
      fd.entry.link_target = target;
    } else if (S_ISDIR(st.st_mode)) {
      fd.entry.type = EntryType::kDir;
      fd.entry.mode = f_.keep_modes ? (st.st_mode & 07777) : f_.dir_mode ? *f_.dir_mode : 0755;
      found_.push_back(fd);
      return AddChildren(host, rel, dest);
    } else {
      return Bad(f_.where, rel + " is a device, socket or fifo; only files, folders and symlinks go into layers");
    }
    found_.push_back(fd);
    return Status::Ok();
  }

  std::vector<Found>& found() { return found_; }

 private:
  Status AddChildren(const std::string& host, const std::string& rel, const std::string& dest) {
    auto names = SortedNames(host, f_.where);
    if (!names.ok()) return names.error();
    for (const auto& n : *names) IMGTOOL_TRY(Add(host + "/" + n, rel + "/" + n, dest + "/" + n));
    return Status::Ok();
  }

  const FileSpec& f_;
  std::string root_;
  std::vector<Found> found_;
};

// Resolves one {src, dest} into entries.
Status PlanFile(const FileSpec& f, const std::string& root, std::vector<Found>& out) {
  std::string src = StripSlashes(f.src);
  std::string parent = src.find('/') == std::string::npos ? "" : src.substr(0, src.rfind('/'));
  std::string last = src.substr(src.rfind('/') == std::string::npos ? 0 : src.rfind('/') + 1);
  auto parent_real = RealPath(parent.empty() ? root : root + "/" + parent, f.where + ".src");
  if (!parent_real.ok()) return parent_real.error();
  if (!Inside(*parent_real, root)) {
    return Bad(f.where + ".src", "'" + f.src + "' resolves to " + *parent_real + ", outside the layer root " + root +
                                     " (through a symlink)");
  }
  std::vector<std::string> names;
  if (IsGlob(last)) {
    DIR* d = ::opendir(parent_real->c_str());
    if (!d) return MakeError(ErrorKind::kNotFound, f.where + ".src: " + parent + ": " + std::strerror(errno));
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != ".." && ::fnmatch(last.c_str(), n.c_str(), FNM_PERIOD) == 0) names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    if (names.empty()) return MakeError(ErrorKind::kNotFound, f.where + ".src: '" + f.src + "' matches nothing");
  } else {
    names.push_back(last);
  }
  bool into_folder = f.dest.back() == '/';
  if (names.size() > 1 && !into_folder) {
    return Bad(f.where + ".dest",
               "'" + f.src + "' matches several files; end dest with '/' to copy them into a folder");
  }
  std::string dest = StripSlashes(f.dest);
  for (const auto& name : names) {
    std::string host = *parent_real + "/" + name;
    std::string rel = parent.empty() ? name : parent + "/" + name;
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      return MakeError(ErrorKind::kNotFound, f.where + ".src: " + rel + ": " + std::strerror(errno));
    }
    // A folder's contents go to dest (like `COPY dir/ /dest/`); a file goes into dest/ or becomes dest.
    std::string target = S_ISDIR(st.st_mode) ? dest : (into_folder ? (dest.empty() ? name : dest + "/" + name) : dest);
    if (target.empty()) return Bad(f.where + ".dest", "a file cannot replace the image's root folder");
    Walker w(f, root);
    IMGTOOL_TRY(w.Add(host, rel, target));
    for (auto& fd : w.found()) out.push_back(std::move(fd));
  }
  return Status::Ok();
}

// A staged package: its tree (modes kept, owners 0:0) and its extra entries.
Status PlanPackage(const PackageSpec& spec, const PlanOptions& options, PlannedLayer& plan, std::vector<Found>& out) {
  auto staged = StagePackage(spec, options.staging_parent);
  if (!staged.ok()) return staged.error();
  std::string id = staged->record.sha256.str();
  if (staged->staging) {
    FileSpec rules;
    rules.keep_modes = true;
    rules.allow_setuid = staged->allow_setuid;
    rules.where = spec.where;
    auto names = SortedNames(staged->staging->path(), spec.where);
    if (!names.ok()) return names.error();
    for (const auto& n : *names) {
      Walker w(rules, staged->staging->path());
      IMGTOOL_TRY(w.Add(staged->staging->path() + "/" + n, n, staged->dest.empty() ? n : staged->dest + "/" + n));
      for (auto& fd : w.found()) {
        // The layer reads the staged file back: it must be what the unpacker wrote.
        auto digest = staged->staged_digests.find(fd.input);
        if (fd.entry.type == EntryType::kFile && digest != staged->staged_digests.end()) {
          fd.entry.expect_sha256 = digest->second;
        }
        fd.input.clear();
        fd.content_id = id;
        out.push_back(std::move(fd));
      }
    }
    plan.staging.push_back(staged->staging);
  }
  for (size_t i = 0; i < staged->extra.size(); ++i) {
    Found fd;
    fd.entry = std::move(staged->extra[i]);
    fd.content_id = staged->ids[i];
    out.push_back(std::move(fd));
  }
  plan.packages.push_back(std::move(staged->record));
  for (auto& n : staged->notes) plan.notes.push_back(std::move(n));
  return Status::Ok();
}

bool SameMeta(const Entry& a, const Entry& b) {
  return a.type == b.type && a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && a.link_target == b.link_target;
}

}  // namespace

Result<std::vector<Entry>> Normalize(std::vector<Entry> entries, std::vector<std::string>* inputs) {
  if (inputs) inputs->resize(entries.size());
  std::vector<Entry> out;
  std::vector<std::string> out_inputs;
  std::map<std::string, std::pair<Entry, std::string>> sorted;
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    std::string input = inputs ? (*inputs)[i] : "";
    auto it = sorted.find(e.path);
    if (it != sorted.end()) {
      // One folder may be named twice with the same metadata; anything else is ambiguous.
      if (e.type == EntryType::kDir && SameMeta(it->second.first, e)) continue;
      return MakeError(ErrorKind::kInvalidInput,
                       "/" + e.path + " comes from two sources with different contents or metadata");
    }
    std::string key = e.path;  // copied first: the entry itself is moved into the map
    sorted.emplace(std::move(key), std::make_pair(std::move(e), input));
  }
  // Parents that no source named: plain root-owned folders.
  std::vector<std::string> parents;
  for (const auto& [path, _] : sorted) {
    for (size_t pos = path.find('/'); pos != std::string::npos; pos = path.find('/', pos + 1)) {
      parents.push_back(path.substr(0, pos));
    }
  }
  for (const auto& p : parents) {
    auto it = sorted.find(p);
    if (it == sorted.end()) {
      Entry d;
      d.path = p;
      d.type = EntryType::kDir;
      d.mode = 0755;
      sorted.emplace(p, std::make_pair(d, std::string()));
    } else if (it->second.first.type != EntryType::kDir) {
      return MakeError(ErrorKind::kInvalidInput,
                       "/" + p + " is a file in the layer but also the folder of other entries");
    }
  }
  // std::map orders by bytes; a parent is a prefix of its children, so it comes first.
  for (auto& [path, pair] : sorted) {
    out.push_back(std::move(pair.first));
    out_inputs.push_back(std::move(pair.second));
  }
  if (inputs) *inputs = std::move(out_inputs);
  return out;
}

Result<PlannedLayer> PlanLayer(const LayerSpec& layer, const PlanOptions& options) {
  PlannedLayer plan;
  std::vector<Found> found;
  if (!layer.files.empty()) {
    auto root = RealPath(layer.root, layer.where + ".root");
    if (!root.ok()) return root.error();
    for (const auto& f : layer.files) IMGTOOL_TRY(PlanFile(f, *root, found));
  }
  for (const auto& p : layer.packages) IMGTOOL_TRY(PlanPackage(p, options, plan, found));

  std::vector<Entry> entries;
  std::vector<std::string> inputs;
  std::map<std::string, const Found*> by_path;
  for (const auto& fd : found) {
    entries.push_back(fd.entry);
    inputs.push_back(fd.input);
    by_path[fd.entry.path] = &fd;
  }
  auto normalized = Normalize(std::move(entries), &inputs);
  if (!normalized.ok()) return normalized.error().Context(layer.where);

  plan.name = layer.name;
  plan.entries = std::move(*normalized);
  plan.inputs = std::move(inputs);
  // Hardlinks: the first path (in tar order) of a (device, inode) carries the content.
  std::map<std::pair<dev_t, ino_t>, std::string> first_path;
  std::string fp = "layer " + layer.name + "\n";
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    Entry& e = plan.entries[i];
    auto it = by_path.find(e.path);
    const Found* src = it == by_path.end() ? nullptr : it->second;
    if (src && e.type == EntryType::kFile && src->nlink > 1) {
      auto [pos, inserted] = first_path.emplace(std::make_pair(src->dev, src->ino), e.path);
      if (!inserted) {
        e.type = EntryType::kHardlink;
        e.link_target = pos->second;
        e.source.clear();
        e.size = 0;
        plan.inputs[i].clear();
      }
    }
    if (e.type == EntryType::kFile) plan.content_bytes += e.size;
    fp += e.path + "\t" + std::to_string(static_cast<int>(e.type)) + "\t" + std::to_string(e.mode) + "\t" +
          std::to_string(e.uid) + ":" + std::to_string(e.gid) + "\t" + e.link_target + "\t" + std::to_string(e.size);
    if (src && !src->content_id.empty()) {
      fp += "\t" + src->content_id;
    } else if (src && e.type == EntryType::kFile) {
      fp += "\t" + e.source + "\t" + std::to_string(src->mtime_ns) + "\t" + std::to_string(src->ino) + "\t" +
            std::to_string(src->dev);
    }
    fp += "\n";
  }
  plan.fingerprint = fp;
  return plan;
}

}  // namespace imgtool::build
