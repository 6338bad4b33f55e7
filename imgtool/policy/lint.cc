#include "policy/lint.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/digest.h"
#include "rootfs/user_arg.h"

namespace imgtool::policy {

namespace {

struct Stage {
  int line = 0;
  std::string name;  // lower case, "" when unnamed
  std::string base;  // lower case when it names an earlier stage
  bool base_is_stage = false;
  size_t parent = 0;  // the index of that stage, when base_is_stage
  int user_line = 0;
  std::string user;  // last USER, "" when none
};

// The exec form's words: a JSON array's string members (others are skipped), read as
// events by nlohmann's iterative parser, so an array nested 100,000 deep is neither built
// as a tree nor walked by recursion. nullopt when the text is not JSON.
class ExecFormWords : public nlohmann::json::json_sax_t {
 public:
  static std::optional<std::vector<std::string>> Of(const std::string& args) {
    ExecFormWords words;
    if (!nlohmann::json::sax_parse(args, &words) || !words.array_) return std::nullopt;
    return std::move(words.words_);
  }

  bool string(string_t& s) override {
    if (depth_ == 1) words_.push_back(s);
    return true;
  }
  bool start_array(std::size_t) override {
    array_ = array_ || depth_ == 0;
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool start_object(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  size_t depth_ = 0;
  bool array_ = false;  // the document is an array (not an object or a scalar)
  std::vector<std::string> words_;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsLowerHex(std::string_view s, size_t length) {
  return s.size() == length && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool IsSha256(const std::string& d) { return oci::Digest::Parse(d).ok(); }

// A git commit id as ADD --checksum takes one: SHA-1 (40 hex) or SHA-256 (64 hex).
bool IsCommitId(const std::string& c) { return IsLowerHex(c, 40) || IsLowerHex(c, 64); }

bool IsNumber(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// ARG NAME[=default] ... : declares each name; a --build-arg overrides its default.
void DeclareArgs(const std::string& args, const std::map<std::string, std::string>& build_args,
                 std::map<std::string, std::string>& vars) {
  for (const auto& w : SplitWords(args)) {
    auto eq = w.find('=');
    std::string name = w.substr(0, eq);
    if (auto b = build_args.find(name); b != build_args.end()) {
      vars[name] = b->second;
    } else if (eq != std::string::npos) {
      vars[name] = w.substr(eq + 1);
    }
  }
}

class Linter {
 public:
  explicit Linter(const LintOptions& o) : o_(o) {}

  // An image named where one is pulled (FROM, COPY --from): pinned, and not "latest".
  void CheckImage(int line, const std::string& image, const std::string& as_written, const std::string& where) {
    std::string shown = "'" + as_written + "'" + (image == as_written ? "" : " (= '" + image + "')");
    if (image.empty()) {
      Add(line, "fromDigest", where + " '" + as_written + "' names no image after ARG substitution");
      return;
    }
    auto at = image.find('@');
    std::string name = image.substr(0, at);
    std::string digest = at == std::string::npos ? "" : image.substr(at + 1);
    auto colon = name.rfind(':');
    std::string tag =
        colon != std::string::npos && name.find('/', colon) == std::string::npos ? name.substr(colon + 1) : "";
    if (o_.rules.no_latest && tag == "latest") Add(line, "noLatest", where + " " + shown + " uses the tag 'latest'");
    if (o_.rules.no_latest && tag.empty() && digest.empty()) {
      Add(line, "noLatest", where + " " + shown + " has no tag or digest, so it means 'latest'");
    }
    if (!o_.rules.from_digest) return;
    if (digest.empty()) {
      Add(line, "fromDigest", where + " " + shown + " is not pinned: want " + name + "@sha256:<64 hex>");
    } else if (!IsSha256(digest)) {
      Add(line, "fromDigest", where + " " + shown + ": '" + digest + "' is not sha256:<64 hex>");
    }
  }

  void From(const Instruction& ins) {
    std::vector<std::string> words;
    for (const auto& w : SplitWords(ins.args)) {
      if (w.rfind("--", 0) != 0) words.push_back(w);
    }
    Stage s;
    s.line = ins.line;
    std::string written = words.empty() ? "" : words[0];
    std::string image = ExpandArgs(written, global_);
    if (words.size() >= 3 && Lower(words[1]) == "as") s.name = Lower(words[2]);
    if (Lower(image) == "scratch") {
      s.base = "scratch";
    } else if (auto parent = stage_index_.find(Lower(image)); parent != stage_index_.end()) {
      s.base = Lower(image);
      s.base_is_stage = true;
      s.parent = parent->second;
    } else {
      s.base = image;
      CheckImage(ins.line, image, written, "FROM");
    }
    stages_.push_back(s);
    if (!s.name.empty()) stage_index_[s.name] = stages_.size() - 1;  // a later stage of the same name wins
  }

  void Copy(const Instruction& ins) {
    for (const auto& w : SplitWords(ins.args)) {
      if (w.rfind("--from=", 0) != 0) continue;
      std::string from = w.substr(7);
      // A stage (by name or index) or a named build context is fine; an image reference
      // (it has a registry, a tag or a digest) is pulled and must be pinned.
      if (IsStage(Lower(from)) || IsNumber(from)) continue;
      if (from.find_first_of("/:@") == std::string::npos) continue;
      CheckImage(ins.line, from, from, "COPY --from");
    }
  }

  void CheckAdd(const Instruction& ins) {
    if (!o_.rules.add_checksum) return;
    std::vector<std::string> words;
    std::string checksum;
    bool has_checksum = false;
    if (!ins.args.empty() && ins.args[0] == '[') {  // exec form: ADD ["src", "dest"]
      words = ExecFormWords::Of(ins.args).value_or(std::vector<std::string>{});
    } else {
      for (const auto& w : SplitWords(ins.args)) {
        if (w.rfind("--checksum=", 0) == 0) {
          checksum = w.substr(11);
          has_checksum = true;
        } else if (w.rfind("--", 0) != 0) {
          words.push_back(w);
        }
      }
    }
    if (!words.empty()) words.pop_back();  // the destination
    for (const auto& src : words) {
      bool http = src.rfind("http://", 0) == 0 || src.rfind("https://", 0) == 0;
      bool git = src.rfind("git@", 0) == 0 || src.rfind("git://", 0) == 0 || src.rfind("ssh://", 0) == 0 ||
                 (http && (src.find(".git#") != std::string::npos ||
                           (src.size() > 4 && src.compare(src.size() - 4, 4, ".git") == 0)));
      if (!http && !git) continue;
      if (git) {
        if (!has_checksum || !IsCommitId(checksum)) {
          Add(ins.line, "addChecksum", "ADD " + src + " needs --checksum=<commit id> (40 or 64 hex)");
        }
      } else if (!has_checksum) {
        Add(ins.line, "addChecksum", "ADD " + src + " has no --checksum=sha256:<64 hex>");
      } else if (!IsSha256(checksum)) {
        Add(ins.line, "addChecksum", "ADD " + src + ": --checksum='" + checksum + "' is not sha256:<64 hex>");
      }
    }
  }

  std::vector<Finding> Run(const Dockerfile& df) {
    for (const auto& ins : df.instructions) {
      if (ins.keyword == "ARG" && stages_.empty()) {
        DeclareArgs(ins.args, o_.build_args, global_);
      } else if (ins.keyword == "FROM") {
        From(ins);
      } else if (ins.keyword == "COPY") {
        Copy(ins);
      } else if (ins.keyword == "ADD") {
        CheckAdd(ins);
      } else if (ins.keyword == "USER" && !stages_.empty()) {
        stages_.back().user = ins.args;
        stages_.back().user_line = ins.line;
      }
    }
    if (stages_.empty()) {
      findings_.push_back({1, "fromDigest", "no FROM instruction"});
    } else if (o_.rules.non_root_user) {
      FinalUser();
    }
    std::stable_sort(findings_.begin(), findings_.end(),
                     [](const Finding& a, const Finding& b) { return a.line < b.line; });
    return findings_;
  }

 private:
  bool IsStage(const std::string& lower) const { return stage_index_.count(lower) > 0; }

  // The user the final image runs as: its stage's last USER, else the stage it is built on
  // (always an earlier one, so the walk ends; one step per stage, not a search).
  void FinalUser() {
    const Stage* s = &stages_.back();
    while (s->user.empty() && s->base_is_stage) s = &stages_[s->parent];
    const Stage& final = stages_.back();
    if (s->user.empty()) {
      Add(final.line, "nonRootUser", "the final stage sets no USER, so it runs as root (or as its base image says)");
      return;
    }
    // Numbers as runtimes read them (rootfs/user_arg.h): "+0" is root, "4294967296" root
    // to containerd and refused by runc.
    std::string user = s->user.substr(0, s->user.find(':'));
    std::string group = s->user.find(':') == std::string::npos ? "" : s->user.substr(s->user.find(':') + 1);
    rootfs::UserArg uid = rootfs::ParseUserArg(user);
    rootfs::UserArg gid = rootfs::ParseUserArg(group);
    if (user == "root" || (uid.kind == rootfs::UserArg::Kind::kId && uid.id == 0)) {
      Add(s->user_line, "nonRootUser", "USER " + s->user + " is root");
    } else if (uid.kind == rootfs::UserArg::Kind::kRefused) {
      Add(s->user_line, "nonRootUser", "USER " + s->user + ": " + uid.why);
    } else if (uid.kind == rootfs::UserArg::Kind::kName) {
      Add(s->user_line, "nonRootUser",
          "USER " + s->user + " is not a numeric uid: use e.g. USER 10001:10001 so no name lookup decides it");
    } else if (!group.empty() && gid.kind != rootfs::UserArg::Kind::kId) {
      Add(s->user_line, "nonRootUser",
          "USER " + s->user + ": group '" + group + "' is not a numeric gid" + (gid.why.empty() ? "" : ": " + gid.why));
    }
  }

  void Add(int line, const std::string& rule, const std::string& message) {
    findings_.push_back({line, rule, message});
  }

  const LintOptions& o_;
  std::map<std::string, std::string> global_;
  std::vector<Stage> stages_;
  std::map<std::string, size_t> stage_index_;  // stage name -> its latest stage so far
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> LintDockerfile(const Dockerfile& df, const LintOptions& options) {
  return Linter(options).Run(df);
}

}  // namespace imgtool::policy
