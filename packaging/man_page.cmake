# cmake -DZPMIX=zpmix -DCMD=run -DIN=man/zpmix-run.1.in -DOUT=zpmix-run.1 -P man_page.cmake: the
# man page IN with @OPTIONS@ replaced by `zpmix --roff-options CMD` (the options as --help has them).
execute_process(COMMAND ${ZPMIX} --roff-options ${CMD} OUTPUT_VARIABLE options
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR options STREQUAL "")
  message(FATAL_ERROR "${ZPMIX} --roff-options ${CMD} failed (${rc})")
endif()
file(READ ${IN} page)
string(REPLACE "@OPTIONS@\n" "${options}" page "${page}")
file(WRITE ${OUT} "${page}")
