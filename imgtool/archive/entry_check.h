// Checks a layer's entry list before a single byte is written: paths well formed and
// strictly sorted in byte order (which also puts parents before children), no
// duplicates, links that make sense. A bad list is the caller's bug or a hostile spec,
// so every failure is kInvalidInput naming the offending path.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <string>
#include <vector>

#include "archive/layer.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

// Empty when `path` is a valid in-image path ("usr/lib/x.so"), else why not.
std::string PathProblem(const std::string& path);

Status CheckEntries(const std::vector<Entry>& entries);

// Bytes the entry's content takes in the tar (0 for everything but kFile).
uint64_t ContentSize(const Entry& e);

}  // namespace imgtool::archive::internal
