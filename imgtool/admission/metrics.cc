#include "admission/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace imgtool::admission {

namespace {

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    out += (i ? "," : "") + labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
  }
  return out + "}";
}

// The label set with one more label (le) appended: {a="b",le="0.5"}.
std::string WithLe(const std::string& labels, const std::string& le) {
  std::string tail = "le=\"" + le + "\"}";
  if (labels.empty()) return "{" + tail;
  return labels.substr(0, labels.size() - 1) + "," + tail;
}

// HELP text escapes only \ and newline (the format's rule).
std::string EscapeHelp(const std::string& h) {
  std::string out;
  for (char c : h) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  // The shortest of %.15g and %.17g that reads back as the same double: 0.1, not 0.10000000000000001.
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void MetricRegistry::DeclareCounter(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lock(mu_);
  families_[name] = Family{help, "counter", {}, {}};
}

void MetricRegistry::DeclareGauge(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lock(mu_);
  families_[name] = Family{help, "gauge", {}, {}};
}

void MetricRegistry::DeclareHistogram(const std::string& name, const std::string& help, std::vector<double> bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  families_[name] = Family{help, "histogram", std::move(bounds), {}};
}

MetricRegistry::Series* MetricRegistry::Find(const std::string& name, const Labels& labels) {
  auto f = families_.find(name);
  if (f == families_.end()) return nullptr;
  Series& s = f->second.series[RenderLabels(labels)];
  if (f->second.type == "histogram" && s.counts.empty()) s.counts.assign(f->second.bounds.size() + 1, 0);
  return &s;
}

void MetricRegistry::Add(const std::string& name, const Labels& labels, double delta) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Series* s = Find(name, labels)) s->value += delta;
}

void MetricRegistry::Set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Series* s = Find(name, labels)) s->value = value;
}

void MetricRegistry::Observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Series* s = Find(name, labels);
  if (!s || s->counts.empty()) return;
  const auto& bounds = families_[name].bounds;
  size_t i = 0;
  while (i < bounds.size() && value > bounds[i]) ++i;
  ++s->counts[i];
  ++s->count;
  s->value += value;
}

void MetricRegistry::OnScrape(std::function<void(MetricRegistry&)> refresh) {
  std::lock_guard<std::mutex> lock(mu_);
  refresh_.push_back(std::move(refresh));
}

double MetricRegistry::Value(const std::string& name, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto s = f->second.series.find(RenderLabels(labels));
  return s == f->second.series.end() ? 0 : s->second.value;
}

std::string MetricRegistry::Render() {
  std::vector<std::function<void(MetricRegistry&)>> refresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refresh = refresh_;
  }
  for (auto& r : refresh) r(*this);
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + EscapeHelp(f.help) + "\n# TYPE " + name + " " + f.type + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != "histogram") {
        out += name + labels + " " + FormatValue(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < s.counts.size(); ++i) {
        cumulative += s.counts[i];
        std::string le = i < f.bounds.size() ? FormatValue(f.bounds[i]) : "+Inf";
        out += name + "_bucket" + WithLe(labels, le) + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + labels + " " + FormatValue(s.value) + "\n";
      out += name + "_count" + labels + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace imgtool::admission
