// A wheel's RECORD (PEP 376/427): CSV rows "path,sha256=<urlsafe base64, no padding>,size".
// Shared by UnpackWheel (a zip) and ReadInstalledWheel (files already on disk).
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "pkg/package.h"

namespace imgtool::pkg::internal {

struct RecordEntry {
  std::string path;
  oci::Digest sha256;  // empty when RECORD gives no hash (RECORD itself, some bytecode)
  bool has_size = false;
  uint64_t size = 0;
};

// Parses RECORD's CSV (quoted fields included). A hash other than sha256, a malformed
// digest or size, or a path listed twice is kInvalidInput naming the row.
Result<std::vector<RecordEntry>> ParseRecord(const std::string& text);

// Decodes urlsafe base64 with or without padding; false on anything else.
bool DecodeBase64Url(std::string_view in, std::string* out);

// Compares a file's hash and size with its RECORD row; kIntegrity naming the path. A row
// without a hash is refused here: callers decide which rows may go unhashed.
Status CheckRecordEntry(const RecordEntry& entry, const oci::Digest& sha256, uint64_t size);

// Files an installer may write or drop without RECORD being wrong: compiled bytecode.
bool IsBytecode(std::string_view path);

// Sets wheel->name and wheel->version from METADATA's headers; both are required.
Status ReadNameVersion(const std::string& metadata, WheelPackage* wheel);

}  // namespace imgtool::pkg::internal
