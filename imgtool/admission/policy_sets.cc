#include "admission/policy_sets.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <tuple>

#include "fs/atomic_file.h"

namespace imgtool::admission {

namespace {

// Key paths in a policy resolve against its folder, made absolute once (the server may
// outlive its working directory's meaning), as policy::LoadPolicy does.
std::string FolderOf(const std::string& path) {
  std::string dir = fs::DirName(path);
  if (!dir.empty() && dir[0] == '/') return dir;
  char* cwd = getcwd(nullptr, 0);
  std::string base = cwd ? cwd : ".";
  std::free(cwd);
  return dir.empty() || dir == "." ? base : base + "/" + dir;
}

}  // namespace

Status CheckSetName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 63 && name[0] != '-';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (ok) return Status::Ok();
  return MakeError(ErrorKind::kInvalidInput,
                   "policy set '" + name + "': want 1-63 of a-z, 0-9 and '-', not starting with '-'");
}

uint64_t NextPolicyGeneration() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

Result<policy::Policy> PolicySets::ParseForWebhook(const std::string& bytes, const std::string& path) {
  auto pol = policy::ParsePolicy(bytes, FolderOf(path), path);
  if (!pol.ok()) return pol.error();
  if (pol->RuleNames().empty()) {
    return MakeError(ErrorKind::kInvalidInput, path + ": $.rules: no image rules (nothing to check)");
  }
  return pol;
}

Result<std::shared_ptr<const LoadedPolicy>> PolicySets::Parse(const std::string& bytes, const std::string& path,
                                                              const std::string& sha256) const {
  auto pol = parse_(bytes, path);
  if (!pol.ok()) return pol.error();
  auto loaded = std::make_shared<LoadedPolicy>();
  loaded->policy = std::move(*pol);
  loaded->generation = NextPolicyGeneration();
  loaded->sha256 = sha256;
  return std::shared_ptr<const LoadedPolicy>(std::move(loaded));
}

Status PolicySets::Add(const std::string& name, const std::string& path) {
  if (!name.empty()) {
    if (auto st = CheckSetName(name); !st.ok()) return st;
  }
  auto file = std::make_unique<WatchedFile>(path);
  std::string bytes;
  auto changed = file->Changed(&bytes);
  if (!changed.ok()) return changed.error().Context("policy " + path);
  auto loaded = Parse(bytes, path, file->sha256());
  if (!loaded.ok()) return loaded.error();
  std::lock_guard<std::mutex> lock(mu_);
  if (sets_.count(name)) {
    return MakeError(ErrorKind::kInvalidInput, "policy set '" + name + "' is named twice");
  }
  sets_[name] = Set{path, std::move(file), *loaded, ""};
  return Status::Ok();
}

std::shared_ptr<const LoadedPolicy> PolicySets::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sets_.find(name);
  return it == sets_.end() ? nullptr : it->second.current;
}

std::vector<std::string> PolicySets::Names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, set] : sets_) out.push_back(name);
  return out;
}

std::vector<PolicySets::Reload> PolicySets::ReloadChanged() {
  std::vector<std::tuple<std::string, WatchedFile*, std::string*>> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [name, set] : sets_) files.emplace_back(name, set.file.get(), &set.unreadable);
  }
  std::vector<Reload> out;
  for (auto& [name, file, unreadable] : files) {
    std::string bytes;
    auto changed = file->Changed(&bytes);
    Reload r{name, file->path(), Status::Ok(), nullptr};
    std::string error = changed.ok() ? "" : changed.error().message;
    bool repeated = !error.empty() && error == *unreadable;
    *unreadable = error;
    if ((changed.ok() && !*changed) || repeated) continue;
    if (!changed.ok()) {
      r.status = changed.error();
    } else if (auto loaded = Parse(bytes, file->path(), file->sha256()); !loaded.ok()) {
      r.status = loaded.error();
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      sets_[name].current = *loaded;
    }
    r.now = Get(name);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace imgtool::admission
