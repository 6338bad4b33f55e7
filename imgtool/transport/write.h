// Write(node, sink): the one walk every copy, push, pull, sign and index verb shares
// (go-containerregistry's remote.Write / layout.Write). The manifest graph is read
// first (an index -> its images -> their configs and layers, artifacts' blobs), then
// blobs go a few at a time, then manifests children first, the top one last under its
// tag: a destination never names something it does not hold yet.
//
// Not here: printing (progress arrives as BlobEvents from worker threads), choosing the
// source or destination (open.h), committing the sink (the caller does, once).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oci/image.h"
#include "oci/sink.h"

namespace imgtool::transport {

struct BlobEvent {
  enum class Kind { kStart, kProgress, kDone };
  Kind kind = Kind::kStart;
  oci::Digest digest;
  std::string media_type;
  int64_t size = 0;
  uint64_t done = 0;   // bytes so far (kProgress, kDone)
  std::string action;  // kDone: exists, mounted, uploaded, resumed, written, linked
};

struct WriteOptions {
  int jobs = 3;  // blobs in flight at once
  // Called from worker threads (serialize inside if needed).
  std::function<void(const BlobEvent&)> on_blob;
};

struct BlobRecord {
  oci::Digest digest;
  std::string media_type;
  int64_t size = 0;
  std::string action;
  uint64_t bytes_sent = 0;  // bytes that crossed the network or were written for it
  uint64_t resumed_from = 0;
};

struct WriteReport {
  oci::Digest digest;  // of the top manifest (or index)
  std::string media_type;
  std::vector<oci::Digest> manifests;  // every manifest written, children first
  std::vector<BlobRecord> blobs;
  uint64_t bytes_sent = 0;
};

// Writes `node` and everything it names into `sink`; the top manifest gets `tag`
// (oci::Sink::PutManifest's meaning). Appends to `report`.
Status Write(const oci::Node& node, oci::Sink& sink, const std::optional<std::string>& tag, const WriteOptions& opts,
             WriteReport& report);

// Every manifest of the graph (the node's own digest first, then its children's).
Result<std::vector<oci::Node>> Manifests(const oci::Node& node);

}  // namespace imgtool::transport
