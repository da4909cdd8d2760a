# The engine's layers: one static library per folder of engine/, linked only to the layers
# below it that it names. Static libraries do not stop a source from including any header it can
# reach, so the edges are also checked on the #include lines (cmake/CheckEngineLayers.cmake):
# at configure time here, and by the test `engine_layers` on the sources as they are now.

# ringlab_declare_layer(NAME [DEPENDS layer...]): NAME may use itself and the layers below
# DEPENDS (their closure). A layer can only depend on layers declared before it: no cycles.
function(ringlab_declare_layer name)
  cmake_parse_arguments(L "" "" "DEPENDS" ${ARGN})
  set(closure ${name})
  foreach(dep IN LISTS L_DEPENDS)
    get_property(known GLOBAL PROPERTY RINGLAB_LAYERS)
    if(NOT dep IN_LIST known)
      message(FATAL_ERROR "engine layer '${name}' depends on '${dep}', which is not declared before it "
                          "(a layer may only use the layers below it)")
    endif()
    get_property(below GLOBAL PROPERTY RINGLAB_LAYER_CLOSURE_${dep})
    list(APPEND closure ${below})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set_property(GLOBAL APPEND PROPERTY RINGLAB_LAYERS ${name})
  set_property(GLOBAL PROPERTY RINGLAB_LAYER_CLOSURE_${name} "${closure}")
endfunction()

# ringlab_layer(NAME [DEPENDS layer...] [LIBS target...]): declares the layer and builds
# engine/NAME/*.cpp as the static library ringlab_NAME.
function(ringlab_layer name)
  cmake_parse_arguments(L "" "" "DEPENDS;LIBS" ${ARGN})
  ringlab_declare_layer(${name} DEPENDS ${L_DEPENDS})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  add_library(ringlab_${name} STATIC ${sources})
  target_include_directories(ringlab_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  list(TRANSFORM L_DEPENDS PREPEND ringlab_)
  target_link_libraries(ringlab_${name} PUBLIC ${L_DEPENDS} ${L_LIBS})
  # The GPU plugin links the layers below it into a shared library.
  set_target_properties(ringlab_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# Writes the declared layers to the build tree (for the test) and checks the sources now.
function(ringlab_check_layers)
  get_property(layers GLOBAL PROPERTY RINGLAB_LAYERS)
  set(text "set(RINGLAB_LAYERS \"${layers}\")\n")
  foreach(layer IN LISTS layers)
    get_property(closure GLOBAL PROPERTY RINGLAB_LAYER_CLOSURE_${layer})
    string(APPEND text "set(RINGLAB_LAYER_CLOSURE_${layer} \"${closure}\")\n")
  endforeach()
  set(file ${PROJECT_BINARY_DIR}/engine_layers.cmake)
  file(WRITE ${file} "${text}")
  set_property(GLOBAL PROPERTY RINGLAB_LAYERS_FILE ${file})
  set(RINGLAB_LAYERS_FILE ${file})
  set(RINGLAB_SOURCE_DIR ${PROJECT_SOURCE_DIR})
  include(${PROJECT_SOURCE_DIR}/cmake/CheckEngineLayers.cmake)
endfunction()
