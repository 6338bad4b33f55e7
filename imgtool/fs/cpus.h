// How many CPUs this process may run on: its affinity mask (so `taskset`, container
// cpusets and cgroup pinning count), else the machine's count; at least 1. Sizes the
// thread pools of the layer compressor and the probe's library hashing.
#pragma once

namespace imgtool::fs {

int UsableCpus();

}  // namespace imgtool::fs
