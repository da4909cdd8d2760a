# The app's OpenGL loader, generated into the build tree by Debian's glad 2 (python3-glad) from
# the Khronos XML it ships: --reproducible keeps it offline (no download of the newest XML) and
# the output the same from build to build. Nothing generated is committed; wiping the build
# directory regenerates it. Provides ringlab_glad: gladLoadGL() and the GL 3.3 core functions.
#
# Only ringlab's own GL calls go through it: Debian's Dear ImGui OpenGL3 backend has a loader of
# its own inside libimgui.a.
set(RINGLAB_GL_MAJOR 3)
set(RINGLAB_GL_MINOR 3)
# Comma separated; the app calls core functions only, so none.
set(RINGLAB_GL_EXTENSIONS "")

set(_glad_dir ${CMAKE_BINARY_DIR}/glad)
set(_glad_outputs ${_glad_dir}/include/glad/gl.h ${_glad_dir}/include/KHR/khrplatform.h ${_glad_dir}/src/gl.c)
add_custom_command(
  OUTPUT ${_glad_outputs}
  COMMAND ${GLAD_EXECUTABLE} --quiet --reproducible --api gl:core=${RINGLAB_GL_MAJOR}.${RINGLAB_GL_MINOR}
          --extensions=${RINGLAB_GL_EXTENSIONS} --out-path ${_glad_dir} c
  DEPENDS ${GLAD_EXECUTABLE}
  COMMENT "Generating the OpenGL ${RINGLAB_GL_MAJOR}.${RINGLAB_GL_MINOR} core loader (glad) in ${_glad_dir}"
  VERBATIM)

add_library(ringlab_glad STATIC ${_glad_outputs})
# SYSTEM: the generated header is not ours to keep free of warnings.
target_include_directories(ringlab_glad SYSTEM PUBLIC ${_glad_dir}/include)
# The context the app asks GLFW for is the version the loader was generated for.
target_compile_definitions(ringlab_glad PUBLIC RINGLAB_GL_MAJOR=${RINGLAB_GL_MAJOR} RINGLAB_GL_MINOR=${RINGLAB_GL_MINOR})
