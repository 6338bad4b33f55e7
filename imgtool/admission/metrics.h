// The webhook's metrics, and their rendering in the Prometheus text exposition format
// 0.0.4 (what GET /metrics answers): counters, gauges and histograms, each a family of
// series told apart by labels. Thread-safe (one mutex: a review touches it a few times,
// far below its TLS and JSON work). Gauges whose value lives elsewhere (cache sizes,
// reviews in flight) are read at scrape time through OnScrape.
//
// Not here: which metrics the webhook keeps (cmd_admission.cc declares them) or HTTP.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace imgtool::admission {

using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricRegistry {
 public:
  // Declared once, before use; a series of an undeclared family is ignored (a typo in a
  // name must not take the webhook down).
  void DeclareCounter(const std::string& name, const std::string& help);
  void DeclareGauge(const std::string& name, const std::string& help);
  // `bounds`: the buckets' upper bounds, increasing; +Inf is added.
  void DeclareHistogram(const std::string& name, const std::string& help, std::vector<double> bounds);

  void Add(const std::string& name, const Labels& labels, double delta = 1);
  void Set(const std::string& name, const Labels& labels, double value);
  void Observe(const std::string& name, const Labels& labels, double value);
  // Runs at the start of each Render (outside the lock), to Set gauges read elsewhere.
  void OnScrape(std::function<void(MetricRegistry&)> refresh);

  // The value of one counter or gauge series (0 when absent), for tests and logs.
  double Value(const std::string& name, const Labels& labels) const;

  std::string Render();

 private:
  struct Series {
    double value = 0;              // counter, gauge; histogram: sum
    std::vector<uint64_t> counts;  // histogram: per bucket, not cumulative (last: +Inf)
    uint64_t count = 0;
  };
  struct Family {
    std::string help, type;
    std::vector<double> bounds;
    std::map<std::string, Series> series;  // rendered label set ("" or {a="b",...}) -> series
  };
  Series* Find(const std::string& name, const Labels& labels);  // mu_ held

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  std::vector<std::function<void(MetricRegistry&)>> refresh_;
};

// A label value as the text format wants it: \ " and newline escaped.
std::string EscapeLabelValue(const std::string& v);
// A sample value: integers without a fraction, +Inf / -Inf / NaN spelled as the format does.
std::string FormatValue(double v);

}  // namespace imgtool::admission
