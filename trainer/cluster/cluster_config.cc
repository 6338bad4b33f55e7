#include "cluster/cluster_config.h"

#include <nlohmann/json.hpp>

#include "oci/canonical_json.h"

namespace trainer {
namespace {

Error Invalid(const std::string& msg) { return MakeError(ErrorKind::kInvalidInput, msg); }

Result<std::vector<std::string>> AddressList(const nlohmann::json& cluster, const char* type) {
  std::vector<std::string> out;
  if (!cluster.contains(type)) return out;
  const auto& list = cluster[type];
  if (!list.is_array()) return Invalid(std::string("cluster.") + type + " must be a list of \"host:port\"");
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return Invalid(std::string("cluster.") + type + "[" + std::to_string(i) + "] must be a string");
    }
    std::string a = list[i].get<std::string>();
    auto hp = ParseHostPort(a);
    if (!hp.ok()) return hp.error().Context(std::string("cluster.") + type + "[" + std::to_string(i) + "]");
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::string ClusterTask::Name() const {
  if (type != "rank") return type + ":" + std::to_string(index);
  return (node.empty() ? "" : node + " ") + "rank " + std::to_string(index);
}

std::string ClusterTask::Label() const { return type == "rank" ? Name() : type + " " + std::to_string(index); }

Result<HostPort> ParseHostPort(const std::string& s) {
  HostPort hp;
  size_t colon;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      return Invalid("address \"" + s + "\" is not [host]:port");
    }
    hp.host = s.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) return Invalid("address \"" + s + "\" is not host:port");
    hp.host = s.substr(0, colon);
    if (hp.host.find(':') != std::string::npos) return Invalid("address \"" + s + "\": write IPv6 as [addr]:port");
  }
  std::string port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) {
    return Invalid("address \"" + s + "\" has a bad port");
  }
  hp.port = std::stoi(port);
  if (hp.port < 1 || hp.port > 65535) return Invalid("address \"" + s + "\" has a port outside 1..65535");
  return hp;
}

Result<ClusterConfig> ParseTfConfig(const std::string& text) {
  // imgtool's reader (trainer_core links imgtool_fs, so imgtool_oci): its depth cap.
  auto parsed = imgtool::oci::ParseJsonLenient(text, "TF_CONFIG");
  if (!parsed.ok()) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (j.is_discarded()) return Invalid("TF_CONFIG is not valid JSON");
  if (!j.is_object()) return Invalid("TF_CONFIG must be a JSON object");
  if (!j.contains("cluster") || !j["cluster"].is_object()) return Invalid("TF_CONFIG has no \"cluster\" object");
  if (!j.contains("task") || !j["task"].is_object()) return Invalid("TF_CONFIG has no \"task\" object");
  const auto& cluster = j["cluster"];
  for (auto it = cluster.begin(); it != cluster.end(); ++it) {
    if (it.key() != "chief" && it.key() != "worker") {
      return Invalid("TF_CONFIG cluster." + it.key() + " is not supported (only chief and worker)");
    }
  }
  auto chiefs = AddressList(cluster, "chief");
  if (!chiefs.ok()) return chiefs.error().Context("TF_CONFIG");
  auto workers = AddressList(cluster, "worker");
  if (!workers.ok()) return workers.error().Context("TF_CONFIG");
  if (chiefs->size() > 1) return Invalid("TF_CONFIG cluster.chief must hold at most one address");
  if (chiefs->empty() && workers->empty()) return Invalid("TF_CONFIG cluster lists no chief and no worker");

  ClusterConfig c;
  for (size_t i = 0; i < chiefs->size(); ++i) c.tasks.push_back({"chief", 0, (*chiefs)[i], ""});
  for (size_t i = 0; i < workers->size(); ++i) c.tasks.push_back({"worker", static_cast<int>(i), (*workers)[i], ""});
  c.world_size = static_cast<int>(c.tasks.size());

  const auto& task = j["task"];
  if (!task.contains("type") || !task["type"].is_string()) return Invalid("TF_CONFIG task.type must be a string");
  if (!task.contains("index") || !task["index"].is_number_integer()) {
    return Invalid("TF_CONFIG task.index must be an integer");
  }
  std::string type = task["type"].get<std::string>();
  long index = task["index"].get<long>();
  c.rank = -1;
  for (size_t r = 0; r < c.tasks.size(); ++r) {
    if (c.tasks[r].type == type && c.tasks[r].index == index) c.rank = static_cast<int>(r);
  }
  if (c.rank < 0) {
    return Invalid("TF_CONFIG task " + type + ":" + std::to_string(index) + " is not in the cluster");
  }
  auto store = ParseHostPort(c.tasks[0].address);
  c.store = *store;
  c.self_host = ParseHostPort(c.tasks[static_cast<size_t>(c.rank)].address)->host;
  c.launcher = "tf_config";
  c.store_source = "TF_CONFIG";
  return c;
}

Result<ClusterConfig> ClusterFromFlags(int rank, int world_size, const std::string& rendezvous,
                                       const std::string& host) {
  if (world_size < 1) return Invalid("--world-size must be at least 1");
  if (rank < 0 || rank >= world_size) {
    return Invalid("--rank " + std::to_string(rank) + " is outside 0.." + std::to_string(world_size - 1));
  }
  ClusterConfig c;
  c.rank = rank;
  c.world_size = world_size;
  c.launcher = "flags";
  c.store_source = "--rendezvous";
  for (int r = 0; r < world_size; ++r) c.tasks.push_back({"worker", r, "", ""});
  if (world_size > 1) {
    if (rendezvous.empty()) return Invalid("--world-size > 1 needs --rendezvous HOST:PORT (or TF_CONFIG)");
    auto hp = ParseHostPort(rendezvous);
    if (!hp.ok()) return hp.error().Context("--rendezvous");
    c.store = *hp;
    c.self_host = host.empty() ? hp->host : host;
  }
  return c;
}

Error WithPortHint(const ClusterConfig& cluster, Error e) {
  if (!cluster.port_hint.empty()) e.message += "; " + cluster.port_hint;
  return e;
}

int LocalTasks(const ClusterConfig& cluster) {
  if (cluster.local_tasks > 0) return cluster.local_tasks;
  int n = 0;
  for (const auto& t : cluster.tasks) {
    auto hp = ParseHostPort(t.address);
    n += t.address.empty() || !hp.ok() || hp->host == cluster.self_host ? 1 : 0;
  }
  return n;
}

}  // namespace trainer
