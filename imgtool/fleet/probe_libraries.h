// Which files the lib.* fields hash: the CUDA libraries mapped into this process after
// the probe's loads (dl_iterate_phdr), and cuDNN's sub-libraries, which cuDNN dlopens
// only on first use (so a probe would never see them mapped) but a trainer will run.
// Not a loader: it only reads what the loader did, and for the cuDNN sub-libraries
// follows the two places the loader would look first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgtool::fleet {

struct LoadedLibrary {
  std::string loaded_as;  // the path the loader mapped (or would map), maybe a symlink
  std::string real_path;  // realpath of it: what is hashed
};

// libcuda.so.1, libcudart.so.13, libcublasLt.so.13, libcudnn_ops.so.9, libnccl.so.2,
// libnvrtc*, libnvJitLink*, libnvidia-*, libcufft*, ...: the CUDA family by file name.
bool IsCudaLibraryName(std::string_view file_name);

// Every mapped library whose loaded or real name is a CUDA one, one per real file, in
// load order.
std::vector<LoadedLibrary> MappedCudaLibraries();

// cuDNN 9's libcudnn_{graph,ops,cnn,adv,heuristic,engines_*}.so.9 (cuDNN 8's *_infer and
// *_train) for the libcudnn.so.N among `mapped`. libcudnn.so.N dlopens them by soname
// and has RUNPATH $ORIGIN, so the loader looks in LD_LIBRARY_PATH's folders first, then
// beside libcudnn.so.N; so does this. Those already in `mapped` are left out.
std::vector<LoadedLibrary> CudnnSubLibraries(const std::vector<LoadedLibrary>& mapped,
                                             const std::string& ld_library_path);

// "lib.<file name of the real path>": lib.libcublasLt.so.13, lib.libcuda.so.580.65.06.
std::string LibFieldName(const LoadedLibrary& lib);

}  // namespace imgtool::fleet
