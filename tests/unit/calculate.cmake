# The calculate tool's unit tests; include()d from tests/unit/CMakeLists.txt.
# Needs the mcp_tools target (with tools/calculate.c) and Check.
add_executable(test_calculate ${CMAKE_CURRENT_LIST_DIR}/test_calculate.c)
target_link_libraries(test_calculate PRIVATE mcp_tools PkgConfig::CHECK)
# The schemas are read from the source tree to check they agree with the code.
target_compile_definitions(test_calculate PRIVATE
  CALC_SCHEMA_DIR="${CMAKE_CURRENT_LIST_DIR}/../../schemas")
add_test(NAME unit.calculate COMMAND test_calculate)
set_tests_properties(unit.calculate PROPERTIES LABELS unit)
