# cmake --install: where each part goes (GNUInstallDirs; prefix /usr/local, /usr in the
# .deb). imgtool and imgtool-fleet on PATH; the trainer and its CUDA plugin in
# libexec/imgtool/ (the trainer loads libtrainer_cuda.so from its own folder:
# trainer/cuda/loader.cc); the generated man pages and completions (target imgtool_docs);
# the policies and examples as data; the changelog and copyright for the .deb.
include(GNUInstallDirs)
# The same modes whatever the umask of the one installing (the .deb's bytes depend on them).
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)
set(exe_mode OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(file_mode OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

install(TARGETS imgtool imgtool-fleet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} PERMISSIONS ${exe_mode})
# imgtool's admission server, loaded by `admission serve` alone (imgtool/admission/server_module.h).
install(TARGETS imgtool_admission_server LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/imgtool PERMISSIONS ${file_mode})
if(TARGET trainer)
  install(TARGETS trainer RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/imgtool PERMISSIONS ${exe_mode})
endif()
if(TARGET trainer_cuda)
  # A plugin, not a library others link: no soname, private to the trainer. Mode 644 as
  # Debian wants for shared objects.
  install(TARGETS trainer_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/imgtool PERMISSIONS ${file_mode})
endif()

set(docs ${IMGTOOL_DOCS_DIR})
if(CMAKE_CROSSCOMPILING)
  set(docs_optional OPTIONAL)  # imgtool_docs is not part of a cross build's ALL
endif()
file(MAKE_DIRECTORY ${docs}/man)  # so that install(DIRECTORY) finds it before a build
install(DIRECTORY ${docs}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILE_PERMISSIONS ${file_mode}
  FILES_MATCHING PATTERN "*.1.gz")
install(FILES ${docs}/bash/imgtool ${docs}/bash/imgtool-fleet
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions PERMISSIONS ${file_mode} ${docs_optional})
install(FILES ${docs}/zsh/_imgtool ${docs}/zsh/_imgtool-fleet
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions PERMISSIONS ${file_mode} ${docs_optional})
install(FILES ${docs}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR} PERMISSIONS ${file_mode} ${docs_optional})
install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR} PERMISSIONS ${file_mode})

# Data, read and copied more than run from there: fixed modes (not the checkout's), a
# script (#!) executable as lintian asks, the download caches of examples/golden (1 GB)
# and examples/imgtool-image (its Debian packages and this package itself) and the
# latter's staged spec left out (all git-ignored).
foreach(tree policies examples)
  file(GLOB_RECURSE data_files RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/${tree}/*)
  foreach(f IN LISTS data_files)
    if(f MATCHES "^examples/(golden|imgtool-image)/cache/" OR f STREQUAL "examples/imgtool-image/spec.staged.json")
      continue()
    endif()
    file(READ ${PROJECT_SOURCE_DIR}/${f} head LIMIT 2)
    set(mode ${file_mode})
    if(head MATCHES "^#!")
      set(mode ${exe_mode})
    endif()
    get_filename_component(dir ${f} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${f} DESTINATION ${CMAKE_INSTALL_DATADIR}/imgtool/${dir} PERMISSIONS ${mode})
  endforeach()
endforeach()
