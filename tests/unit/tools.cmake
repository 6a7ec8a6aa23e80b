# Unit tests of the policy (tools_policy.c), the toolset (tools_registry.c)
# and the sandboxed tools;
# include()d from tests/unit/CMakeLists.txt. Tests may include any layer's
# headers, so they name every library they use.
foreach(t policy workspace slots render files sqlite run wsfiles registry repl skill)
  add_executable(test_tools_${t} ${CMAKE_CURRENT_LIST_DIR}/tools_${t}.c)
  target_link_libraries(test_tools_${t} PRIVATE mcp_tools mcp_workspace mcp_policy PkgConfig::CHECK
    PkgConfig::SQLITE Threads::Threads)
  add_test(NAME unit.tools_${t} COMMAND test_tools_${t})
  set_tests_properties(unit.tools_${t} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# tools_run runs real sandboxes; a container build step cannot give it the
# user namespaces it needs (docker/Dockerfile runs -LE needs_sandbox).
set_tests_properties(unit.tools_run PROPERTIES LABELS "unit;needs_sandbox")
