# `cmake --install` and CPack's .deb: the layout of a Debian package.
#   /usr/bin/mcp-sandbox                                  the server
#   /usr/libexec/mcp-sandbox/mcp-sandbox-init             every sandbox's pid 1
#   /usr/share/man/man1/mcp-sandbox.1.gz                  mcp-sandbox(1)
#   /usr/share/doc/mcp-sandbox/examples/policy.json       an example policy
#   /usr/share/doc/mcp-sandbox/copyright
#   /etc/mcp-sandbox/policy.json                          the unit's policy (conffile)
#   /etc/default/mcp-sandbox                              the unit's settings (conffile)
#   /lib/systemd/system/mcp-sandbox.service               the HTTP endpoint, hardened
#   /usr/lib/sysusers.d/mcp-sandbox.conf                  its system user (postinst)
#   /usr/share/bash-completion/completions/mcp-sandbox    bash completion
# include()d from the top CMakeLists.txt after the targets exist.
include(GNUInstallDirs)

set(MCP_DIST ${CMAKE_CURRENT_LIST_DIR})
# Debian puts /etc at /etc whatever the prefix (GNUInstallDirs does so for
# the /usr prefix); a user's `--prefix ~/.local` install gets PREFIX/etc.
set(MCP_ETC ${CMAKE_INSTALL_FULL_SYSCONFDIR})
# Debian 12 installs units under /lib (usrmerge makes it /usr/lib too).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(MCP_UNITDIR /lib/systemd/system)
else()
  set(MCP_UNITDIR ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()

install(TARGETS mcp-sandbox RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# where sandbox/ctx.c looks from the server: ../libexec/mcp-sandbox/
install(TARGETS mcp-sandbox-init
  RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/mcp-sandbox)

# man pages are gzipped in Debian (Policy 12.1); gzip -n for a stable file.
find_program(GZIP_EXECUTABLE gzip REQUIRED)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/mcp-sandbox.1.gz
  COMMAND ${GZIP_EXECUTABLE} -9 -n -c ${MCP_DIST}/mcp-sandbox.1
          > ${CMAKE_CURRENT_BINARY_DIR}/mcp-sandbox.1.gz
  DEPENDS ${MCP_DIST}/mcp-sandbox.1
  COMMENT "Compressing mcp-sandbox.1")
add_custom_target(mcp_manpage ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/mcp-sandbox.1.gz)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mcp-sandbox.1.gz
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${MCP_DIST}/policy.example.json
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples RENAME policy.json)
install(FILES ${MCP_DIST}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${MCP_DIST}/policy.example.json
  DESTINATION ${MCP_ETC}/mcp-sandbox RENAME policy.json)
install(FILES ${MCP_DIST}/mcp-sandbox.default
  DESTINATION ${MCP_ETC}/default RENAME mcp-sandbox)
install(FILES ${MCP_DIST}/mcp-sandbox.service DESTINATION ${MCP_UNITDIR})
install(FILES ${MCP_DIST}/mcp-sandbox.sysusers
  DESTINATION ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d RENAME mcp-sandbox.conf)
install(FILES ${MCP_DIST}/mcp-sandbox.bash-completion
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME mcp-sandbox)

# ---- CPack: a .deb ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mcp-sandbox)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "mcp-sandbox maintainers <mcp-sandbox@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "MCP server whose tools run in a namespace sandbox")
# The synopsis line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the rest.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"mcp-sandbox offers a language model a fixed list of tools (arithmetic,
files of one workspace, allowed programs, code, SQLite queries) over MCP's
stdio and Streamable HTTP transports. Tools with side effects run in fresh
user, mount, pid, ipc, uts, cgroup and network namespaces with seccomp,
Landlock, rlimits and a deadline; the sandbox fails closed.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# libc from dpkg-shlibdeps. json-c, PCRE2, GMP, SQLite and libseccomp are
# linked statically (MCP_STATIC_DEPS); libmicrohttpd is dlopen()ed by the
# HTTP transport, so shlibdeps cannot see it and it is named here; so is
# libgnutls30, dlopen()ed by the egress proxy when a secret is bound.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libmicrohttpd12 (>= 0.9.75), libgnutls30")
if(NOT MCP_STATIC_DEPS OR MCP_SANITIZE)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS
    ", libjson-c5, libpcre2-8-0, libgmp10, libsqlite3-0, libseccomp2")
endif()
# What the default policy offers when present: run_code's toolchains and
# run_command's programs beyond coreutils (missing ones are left out).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, gcc, libc6-dev, jq, git, file")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs, sqlite3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${MCP_DIST}/conffiles
  ${MCP_DIST}/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
