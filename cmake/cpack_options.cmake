# cpack -G DEB (from the build folder): one package, imgtool, of what cmake --install
# installs under /usr. Depends comes from dpkg-shlibdeps (dpkg-dev); the CUDA libraries
# the trainer's plugin links are left out of it (they come from NVIDIA's wheels or
# /usr/local/cuda, not from Debian). Reproducible: every time in it is the commit's
# (cmake/cpack_project_config.cmake sets SOURCE_DATE_EPOCH when cpack runs), modes are
# fixed (install_rules.cmake), binaries stripped; two runs give the same bytes
# (tests/install.sh checks that, and lintian).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME imgtool)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "${IMGTOOL_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${IMGTOOL_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "reproducible OCI images and fleets for GPU training")
set(CPACK_PACKAGE_DESCRIPTION "imgtool builds OCI images whose digest depends only on their inputs,
always non-root, with the CUDA, cuDNN and NCCL stack pinned; it inspects,
verifies, diffs, signs, copies and unpacks them, checks them against policies
(also as a Kubernetes admission webhook), and proves that every worker of a
training job runs the same stack (imgtool fleet check). imgtool-fleet is the
fleet verbs alone, for training images. The small data-parallel trainer used
as the reproducibility payload is in /usr/libexec/imgtool.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://imgtool.invalid/")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack_project_config.cmake)
set(CPACK_IMGTOOL_SOURCE_DIR ${PROJECT_SOURCE_DIR})  # read by cpack_project_config.cmake
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
if(TARGET trainer_cuda)
  # dpkg-shlibdeps must find the plugin's CUDA libraries to read them; libraries found
  # in a private folder add nothing to Depends. (trainer/'s CUDA variables are its own;
  # these are cache entries.)
  set(cuda_dirs "")
  foreach(lib IN ITEMS "${CUDNN_LIBRARY}" "${NCCL_LIBRARY}")
    get_filename_component(dir "${lib}" DIRECTORY)
    list(APPEND cuda_dirs "${dir}")
  endforeach()
  get_filename_component(cuda_root "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  get_filename_component(cuda_root "${cuda_root}" DIRECTORY)
  list(APPEND cuda_dirs "${cuda_root}/lib" "${cuda_root}/lib64")
  list(REMOVE_DUPLICATES cuda_dirs)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${cuda_dirs})
endif()
# libcurl and libarchive are loaded on first use (imgtool/fs/shared_library.h), not NEEDED,
# so dpkg-shlibdeps cannot see them: each gets the Depends entry the package that ships
# it declares in its shlibs file (what dpkg-shlibdeps reads for a NEEDED library without
# a symbols file), e.g. "libcurl4 (>= 7.88.1)". Where dpkg is there but does not know the
# library, configuring stops rather than ship a package without it.
function(imgtool_dlopen_depends out)
  set(entries "")
  foreach(pair IN LISTS ARGN)
    string(REPLACE "=" ";" pair "${pair}")
    list(GET pair 0 soname)
    list(GET pair 1 linked)  # the library the build finds (libcurl.so), beside the soname
    get_filename_component(dir "${linked}" DIRECTORY)
    file(REAL_PATH "${dir}/${soname}" real)
    execute_process(COMMAND ${DPKG_QUERY} -S "${real}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "no Debian package owns ${real} (${soname}): the .deb's Depends needs it")
    endif()
    string(REGEX REPLACE ":[^:]*$" "" package "${owner}")  # "libcurl4:amd64: /usr/lib/..." -> libcurl4:amd64
    execute_process(COMMAND ${DPKG_QUERY} --control-path "${package}" shlibs OUTPUT_VARIABLE shlibs_file
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REGEX MATCH "^lib(.+)\\.so\\.([0-9]+)$" _ "${soname}")
    file(STRINGS "${shlibs_file}" line REGEX "^lib${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ")
    if(NOT line)
      message(FATAL_ERROR "${shlibs_file}: no line for ${soname}")
    endif()
    string(REGEX MATCH "^[^ ]+ [^ ]+ (.+)$" _ "${line}")  # "libcurl 4 libcurl4 (>= 7.88.1)"
    list(APPEND entries "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN entries ", " joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()
find_program(DPKG_QUERY dpkg-query)
if(CMAKE_CROSSCOMPILING)
  # A cross build's package is not built (tests/CMakeLists.txt): its libraries are the sysroot's.
elseif(NOT DPKG_QUERY)
  message(WARNING "no dpkg-query: the .deb would not depend on libcurl and libarchive (not packaged here)")
else()
  set(archive_linked ${LIBARCHIVE_LINK_LIBRARIES})
  list(FILTER archive_linked INCLUDE REGEX "libarchive")
  imgtool_dlopen_depends(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl.so.4=${CURL_LIBRARY_RELEASE}"
    "libarchive.so.13=${archive_linked}")
endif()
include(CPack)
