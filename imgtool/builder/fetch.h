// Package URLs: a `deb` or `wheel` whose src is http://, https:// or file:// is fetched
// with libcurl into a content-addressed download cache, DIR/sha256/<hex>, before it is
// staged. The pin is checked while the bytes stream in; a download whose digest or size
// is not the pinned one is discarded (nothing is left under the final name), and the
// error names both digests. A file already in the cache is opened without following
// anything below the cache folder, hashed again and used when it still matches its pin;
// a damaged one (or a symlink, FIFO or folder under its name) is replaced by a fresh
// download. Either way the caller gets the file as the descriptor that was hashed
// (Fetched::file), so what it unpacks is what was checked, not whatever the cache's name
// holds by then.
//
// Credentials in a URL (https://user:secret@host/...) are used for that download and
// nowhere else: messages and progress show the URL without them, and libcurl does not
// send them on after a redirect to another scheme, host or port.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "builder/spec.h"
#include "fs/hashed_file.h"
#include "oci/digest.h"
#include "oci/result.h"
#include "remote/http.h"

namespace imgtool::build {

// http://, https:// or file:// (what `src` may be besides a path).
bool IsPackageUrl(const std::string& src);

struct FetchOptions {
  std::string cache_dir;  // the download cache (created when missing)
  // "fetching URL: 12.0 MB of 40.1 MB", about once a second; may be empty.
  std::function<void(const std::string&)> progress;
  uint64_t max_bytes = 16ull << 30;  // a server that sends more than this is refused
  // Connect and stall bounds (a package has no whole bound); unset: $IMGTOOL_*_TIMEOUT.
  std::optional<remote::NetTimeouts> timeouts;
};

struct Fetched {
  std::string path;  // the cached file (for messages; read it through `file`)
  std::shared_ptr<const fs::HashedFile> file;
  uint64_t size = 0;
  bool cached = false;  // it was already there
};

// Returns the cached file for `url` pinned by `sha256`, downloading it when missing.
Result<Fetched> FetchPinned(const std::string& url, const oci::Digest& sha256, const FetchOptions& options);

// Fetches every package of the spec whose src is a URL and points its `src` at the file.
Status FetchPackageUrls(Spec& spec, const FetchOptions& options);

// $IMGTOOL_CACHE/downloads (or $XDG_CACHE_HOME/imgtool/downloads, ~/.cache/imgtool/downloads).
std::string DefaultDownloadDir();

}  // namespace imgtool::build
