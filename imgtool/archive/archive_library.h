// libarchive, loaded on first use (fs/shared_library.h): a process that reads no tar,
// .deb, wheel or archive never maps it or its 10 dependencies (libxml2, ICU, nettle,
// lzma, ...). Callers use libarchive's functions as <archive.h> declares them;
// archive_library.cc defines those imgtool uses, each forwarding to libarchive.so.13.
#pragma once

#include "oci/result.h"

// Not imgtool::archive: that name would hide libarchive's `struct archive` in the
// namespaces that use both.
namespace imgtool::libarchive {

// Loads libarchive.so.13 once. "cannot load libarchive.so.13: ...". The functions that
// create a handle call it; every other libarchive call needs a handle.
Status Load();

}  // namespace imgtool::libarchive
