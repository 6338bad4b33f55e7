// Sizes for people, in SI units as skopeo and docker print them: "812 B", "5.3 kB",
// "433.2 MB", "1.05 GB". One formatter for every progress line and table.
#pragma once

#include <cstdint>
#include <string>

namespace imgtool {

std::string HumanBytes(uint64_t n);

}  // namespace imgtool
