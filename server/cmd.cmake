# mcp_cmd: the sandbox's CLI modes, `mcp-sandbox exec -- ...` and
# `mcp-sandbox --check`. Included from server/CMakeLists.txt (and from
# tests/adversarial when the server does not include it yet).
if(NOT TARGET mcp_cmd)
  add_library(mcp_cmd STATIC
    ${CMAKE_CURRENT_LIST_DIR}/cmd_exec.c
    ${CMAKE_CURRENT_LIST_DIR}/cmd_check.c
  )
  target_include_directories(mcp_cmd PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(mcp_cmd PUBLIC mcp_sandbox)
endif()
