# sluice_warnings(target): the project's warning set, -Werror by SLUICE_WERROR.
function(sluice_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wformat=2 -Wundef
      -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wvla
      -Wcast-qual -Wwrite-strings -Wno-unused-parameter>)
  if(SLUICE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>)
  endif()
endfunction()

# sluice_stage(name sources...): one object library per stage of the flow.
function(sluice_stage name)
  add_library(${name} OBJECT ${ARGN})
  sluice_warnings(${name})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE SLUICE_BUILDING _GNU_SOURCE)
endfunction()
