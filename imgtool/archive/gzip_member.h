// Starting the next member of a gzip stream inflated with ISA-L (a gzip file may hold
// several members back to back; each is checked on its own).
//
// Internal to imgtool/archive: not part of its public headers.
#pragma once

#include <isa-l/igzip_lib.h>

#include <cstdint>

namespace imgtool::archive::internal {

// isal_inflate_init clears the input fields too: they are kept across it, so the bytes
// already read into the state are the next member's first.
inline void StartGzipMember(inflate_state* state) {
  uint8_t* next_in = state->next_in;
  uint32_t avail_in = state->avail_in;
  isal_inflate_init(state);
  state->crc_flag = ISAL_GZIP;
  state->next_in = next_in;
  state->avail_in = avail_in;
}

}  // namespace imgtool::archive::internal
