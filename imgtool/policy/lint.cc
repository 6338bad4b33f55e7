#include "policy/lint.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>

#include "oci/canonical_json.h"

namespace imgtool::policy {

namespace {

struct Stage {
  int line = 0;
  std::string name;  // lower case, "" when unnamed
  std::string base;  // lower case when it names an earlier stage
  bool base_is_stage = false;
  int user_line = 0;
  std::string user;  // last USER, "" when none
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsSha256(const std::string& d) {
  static const std::regex re("sha256:[0-9a-f]{64}");
  return std::regex_match(d, re);
}

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
    } else if (IsStage(Lower(image))) {
      s.base = Lower(image);
      s.base_is_stage = true;
    } else {
      s.base = image;
      CheckImage(ins.line, image, written, "FROM");
    }
    stages_.push_back(s);
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
      auto j = oci::ParseJsonOrDiscarded(ins.args);
      if (j.is_array()) {
        for (const auto& w : j) {
          if (w.is_string()) words.push_back(w.get<std::string>());
        }
      }
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
    static const std::regex commit("[0-9a-f]{40}|[0-9a-f]{64}");
    for (const auto& src : words) {
      bool http = src.rfind("http://", 0) == 0 || src.rfind("https://", 0) == 0;
      bool git = src.rfind("git@", 0) == 0 || src.rfind("git://", 0) == 0 || src.rfind("ssh://", 0) == 0 ||
                 (http && (src.find(".git#") != std::string::npos ||
                           (src.size() > 4 && src.compare(src.size() - 4, 4, ".git") == 0)));
      if (!http && !git) continue;
      if (git) {
        if (!has_checksum || !std::regex_match(checksum, commit)) {
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
  bool IsStage(const std::string& lower) const {
    return std::any_of(stages_.begin(), stages_.end(),
                       [&](const Stage& s) { return !s.name.empty() && s.name == lower; });
  }

  // The user the final image runs as: its stage's last USER, else the stage it is built on.
  void FinalUser() {
    const Stage* s = &stages_.back();
    while (s->user.empty() && s->base_is_stage) {
      const Stage* parent = nullptr;
      for (const auto& t : stages_) {
        if (&t != s && t.name == s->base && t.line < s->line) parent = &t;
      }
      if (!parent) break;
      s = parent;
    }
    const Stage& final = stages_.back();
    if (s->user.empty()) {
      Add(final.line, "nonRootUser", "the final stage sets no USER, so it runs as root (or as its base image says)");
      return;
    }
    std::string user = s->user.substr(0, s->user.find(':'));
    std::string group = s->user.find(':') == std::string::npos ? "" : s->user.substr(s->user.find(':') + 1);
    if (user == "root" || (IsNumber(user) && std::stoull(user.substr(0, 12)) == 0)) {
      Add(s->user_line, "nonRootUser", "USER " + s->user + " is root");
    } else if (!IsNumber(user)) {
      Add(s->user_line, "nonRootUser",
          "USER " + s->user + " is not a numeric uid: use e.g. USER 10001:10001 so no name lookup decides it");
    } else if (!group.empty() && !IsNumber(group)) {
      Add(s->user_line, "nonRootUser", "USER " + s->user + ": group '" + group + "' is not a numeric gid");
    }
  }

  void Add(int line, const std::string& rule, const std::string& message) {
    findings_.push_back({line, rule, message});
  }

  const LintOptions& o_;
  std::map<std::string, std::string> global_;
  std::vector<Stage> stages_;
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> LintDockerfile(const Dockerfile& df, const LintOptions& options) {
  return Linter(options).Run(df);
}

}  // namespace imgtool::policy
