cmake_minimum_required(VERSION 3.24)
# Checks every #include "engine/..." in engine/, viz/ and app/ against the declared layers.
# Run at configure time (from ringlab_check_layers) and as a test:
#   cmake -DRINGLAB_LAYERS_FILE=build/engine_layers.cmake -DRINGLAB_SOURCE_DIR=. -P cmake/CheckEngineLayers.cmake
# A file of engine/LAYER/ may include engine/X/ only when X is LAYER or below it. viz/ draws
# from the view model, the simulator and the controller's estimates; app/ may use everything;
# nothing in engine/ or viz/ includes app/, nothing in engine/ includes viz/.
get_filename_component(RINGLAB_SOURCE_DIR "${RINGLAB_SOURCE_DIR}" ABSOLUTE)
include(${RINGLAB_LAYERS_FILE})
set(RINGLAB_LAYER_CLOSURE_viz "")
foreach(below IN ITEMS view_model sim control)
  list(APPEND RINGLAB_LAYER_CLOSURE_viz ${RINGLAB_LAYER_CLOSURE_${below}})
endforeach()

set(problems "")
set(checked 0)
file(GLOB_RECURSE sources RELATIVE ${RINGLAB_SOURCE_DIR}
     ${RINGLAB_SOURCE_DIR}/engine/*.h ${RINGLAB_SOURCE_DIR}/engine/*.cpp ${RINGLAB_SOURCE_DIR}/engine/*.cu
     ${RINGLAB_SOURCE_DIR}/viz/*.h ${RINGLAB_SOURCE_DIR}/viz/*.cpp)
foreach(source IN LISTS sources)
  if(source MATCHES "^engine/([^/]+)/")
    set(layer ${CMAKE_MATCH_1})
    if(NOT DEFINED RINGLAB_LAYER_CLOSURE_${layer})
      list(APPEND problems "${source}: engine/${layer}/ is not a declared layer (engine/CMakeLists.txt)")
      continue()
    endif()
  elseif(source MATCHES "^viz/")
    set(layer viz)
  else()
    continue()  # engine/CMakeLists.txt and the like
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${RINGLAB_SOURCE_DIR}/${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"(engine|viz|app)/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" header "${line}")
    if(header MATCHES "^app/" OR (header MATCHES "^viz/" AND NOT layer STREQUAL "viz"))
      list(APPEND problems "${source} (${layer}) includes ${header}: the engine and the views never use what is above them")
    elseif(header MATCHES "^engine/([^/]+)/")
      set(to ${CMAKE_MATCH_1})
      if(NOT to IN_LIST RINGLAB_LAYER_CLOSURE_${layer})
        list(APPEND problems "${source} (${layer}) includes ${header}: ${layer} does not depend on ${to}")
      endif()
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "engine layers: includes against the declared edges (engine/CMakeLists.txt):\n  ${text}")
endif()
if(checked EQUAL 0)
  message(FATAL_ERROR "engine layers: no source found under ${RINGLAB_SOURCE_DIR}/engine")
endif()
message(STATUS "engine layers: ${checked} sources, every include goes down")
