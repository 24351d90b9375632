# Writes ebb's manual pages into OUT (cmake -P, at build time): runs EBB_MAN
# (the ebb_man program: the pages from ebb's own command line, with the
# hand-written sections of EXTRA appended), then compresses each page with
# gzip -9n as Debian policy asks (no name or time stamp in the header: the
# same sources give the same bytes). Inputs: EBB_MAN, OUT, EXTRA.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${EBB_MAN}" "${OUT}" "${EXTRA}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ebb_man failed (${rc})")
endif()
file(GLOB pages "${OUT}/*.1")
if(NOT pages)
  message(FATAL_ERROR "ebb_man wrote no page into ${OUT}")
endif()
foreach(page ${pages})
  execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (${rc})")
  endif()
endforeach()
