// The base image a spec pins, opened for the build: the image for the spec's platform
// (an index resolves to its child), its layers and config readable and checked as they
// stream. A layout or archive is read where it is. A registry base is kept in the
// download cache, an OCI layout at <download cache>/bases holding the pinned manifest,
// any indexes down to the platform's image, and that image's config and layers (not the
// other platforms'): a later build finds everything there by digest and never contacts
// the registry. Blobs are fetched checked as they stream and renamed into place only
// when they match, so the cache holds whole blobs or none.
//
// Not here: parsing the spec's "base" (base_spec.h), copying layers into the output
// (builder.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "builder/spec.h"
#include "oci/image.h"
#include "oci/result.h"
#include "remote/registry.h"

namespace imgtool::build {

struct BaseOptions {
  // The download cache (builder/fetch.h); empty: a registry base is read from the registry
  // every time.
  std::string cache_dir;
  remote::RegistryOptions registry;  // --creds, --authfile, --tls-verify, --cert-dir
  // "base docker://HOST/REPO@sha256:..: fetching into the download cache"; may be empty.
  // Called from transfer threads one at a time.
  std::function<void(const std::string&)> progress;
};

// The folder in the download cache that keeps registry bases.
std::string BaseCacheDir(const std::string& download_dir);

// The image `spec.base` names for `spec.platform` (not scratch). Its digest is the
// platform's image manifest, spec.base.digest the pinned one (the index's, if it is one).
Result<std::shared_ptr<const oci::Image>> OpenBase(const Spec& spec, const BaseOptions& options);

}  // namespace imgtool::build
