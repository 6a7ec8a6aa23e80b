# Unit tests of the policy tools (issue 4); include()d from
# tests/unit/CMakeLists.txt. Skipped until tools/policy.cmake is included
# into mcp_tools (the sources would not link otherwise).
get_property(_mcp_policy_tools GLOBAL PROPERTY MCP_POLICY_TOOLS_INCLUDED)
if(NOT _mcp_policy_tools)
  message(STATUS "tools.cmake: tools/policy.cmake not included; policy tool tests skipped")
  return()
endif()
foreach(t policy workspace slots render files sqlite run)
  add_executable(test_tools_${t} ${CMAKE_CURRENT_LIST_DIR}/tools_${t}.c)
  target_link_libraries(test_tools_${t} PRIVATE mcp_tools PkgConfig::CHECK
    PkgConfig::SQLITE Threads::Threads)
  add_test(NAME unit.tools_${t} COMMAND test_tools_${t})
  set_tests_properties(unit.tools_${t} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
