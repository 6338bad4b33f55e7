// Files imgtool trusts because this user wrote them: caches that decide what is skipped
// (the probe's hash cache, the known diff_ids verify uses) are read only when they are
// regular files owned by the effective uid and writable by nobody else, in a folder that
// nobody else can write to either. Anything else is refused with the reason, and the
// caller falls back to doing the work.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::fs {

// The bytes of `path` (not followed if a symlink), or kNotFound when it does not exist,
// or kDenied naming why it cannot be trusted (owner, mode, type, over max_bytes).
Result<std::string> ReadOwnFile(const std::string& path, uint64_t max_bytes);

// Reads `root`/`relative` the same way, and walks below `root` without following any
// symlink (fs::OpenRegularBeneath): for entries of a cache whose folder is named once.
Result<std::string> ReadOwnFileBeneath(const std::string& root, const std::string& relative, uint64_t max_bytes);

// True for a file of the effective uid that group and others cannot write: its content
// can change only through us (or root). Only such a file is shared by hard link into
// an output, and only its stat identity may stand in for hashing it (fs/file_identity.h).
bool OnlyWeCanWrite(const struct stat& st);

// Ok when `dir` is a folder (not a symlink) owned by us that group and others cannot write.
Status CheckOwnDir(const std::string& dir);

// Creates `dir` (and its parents) when missing, the leaf with mode 0755 whatever the
// umask; then CheckOwnDir. A folder that exists already is checked, never re-moded.
Status MakeOwnDir(const std::string& dir);

// Writes `path` atomically (fs::AtomicFile) with mode 0644 whatever the umask, so that
// ReadOwnFile accepts it: under umask 002 a cache would otherwise refuse its own files.
Status WriteOwnFile(const std::string& path, std::string_view contents);

}  // namespace imgtool::fs
