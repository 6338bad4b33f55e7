# imgtool_commit_time(<var> <source dir>): $SOURCE_DATE_EPOCH if set, else the time of the
# commit the sources are at (seconds since 1970), else 0: the one date the changelog and
# the .deb carry, so that both are functions of the commit (cmake/make_docs.cmake,
# cmake/cpack_project_config.cmake).
function(imgtool_commit_time var source_dir)
  set(t 0)
  if(DEFINED ENV{SOURCE_DATE_EPOCH} AND "$ENV{SOURCE_DATE_EPOCH}" MATCHES "^[0-9]+$")
    set(t "$ENV{SOURCE_DATE_EPOCH}")
  else()
    get_filename_component(parent "${source_dir}" DIRECTORY)
    set(ENV{GIT_CEILING_DIRECTORIES} "${parent}")
    execute_process(COMMAND git -C "${source_dir}" log -1 --format=%ct RESULT_VARIABLE rc
      OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND out MATCHES "^[0-9]+$")
      set(t "${out}")
    endif()
  endif()
  set(${var} "${t}" PARENT_SCOPE)
endfunction()
