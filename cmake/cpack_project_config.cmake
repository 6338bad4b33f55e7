# Run by cpack (CPACK_PROJECT_CONFIG_FILE) each time it packages: the .deb's times are
# the commit's (SOURCE_DATE_EPOCH, which CPack's DEB generator honours), read now rather
# than at configure time, so a package made after a new commit carries that commit's.
include(${CMAKE_CURRENT_LIST_DIR}/commit_time.cmake)
imgtool_commit_time(epoch "${CPACK_IMGTOOL_SOURCE_DIR}")
set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
