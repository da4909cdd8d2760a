# Every dependency comes from a Debian package, found here and nowhere else.
find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(fmt REQUIRED)
find_package(PkgConfig REQUIRED)

# ringlab_optional(NAME FOUND_VAR): resolve an ON/OFF/AUTO option into RINGLAB_HAVE_<NAME>.
function(ringlab_optional name found)
  set(opt "${RINGLAB_WITH_${name}}")
  if(opt STREQUAL "OFF")
    set(RINGLAB_HAVE_${name} OFF PARENT_SCOPE)
  elseif(${found})
    set(RINGLAB_HAVE_${name} ON PARENT_SCOPE)
  elseif(opt STREQUAL "ON")
    message(FATAL_ERROR "RINGLAB_WITH_${name}=ON but its dependency was not found")
  else()
    set(RINGLAB_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

if(NOT RINGLAB_WITH_GLOO STREQUAL "OFF")
  find_package(Gloo QUIET)
endif()
ringlab_optional(GLOO Gloo_FOUND)

if(NOT RINGLAB_WITH_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
endif()
ringlab_optional(MPI MPI_C_FOUND)

if(NOT RINGLAB_WITH_GUI STREQUAL "OFF")
  find_package(glfw3 3.3 QUIET)
  pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
  # The OpenGL loader is generated at build time (cmake/Glad.cmake) by Debian's glad.
  find_program(GLAD_EXECUTABLE glad DOC "glad 2 OpenGL loader generator (Debian: python3-glad)")
  set(_gui_found FALSE)
  if(glfw3_FOUND AND IMGUI_FOUND)
    if(GLAD_EXECUTABLE)
      set(_gui_found TRUE)
    else()
      # GLFW and Dear ImGui are here, so the app is wanted: stop rather than quietly build
      # without it for want of a build tool.
      message(FATAL_ERROR "the OpenGL loader generator 'glad' was not found: install python3-glad "
                          "(scripts/setup.sh does), or configure with -DRINGLAB_WITH_GUI=OFF to build without the app")
    endif()
  endif()
endif()
ringlab_optional(GUI _gui_found)

if(NOT RINGLAB_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  set(_cuda_found FALSE)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(_cuda_found TRUE)
    endif()
  endif()
endif()
ringlab_optional(CUDA _cuda_found)
if(RINGLAB_HAVE_CUDA)
  # Ampere and Hopper unless the builder names its own (a one-GPU check builds only what it runs:
  # -DCMAKE_CUDA_ARCHITECTURES=90). Set before enable_language, which would pick nvcc's default.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  # One CUDA runtime per process: the shared libcudart that CUDA::cudart links, not a second,
  # static copy that nvcc would add by default (two runtimes keep two views of the device).
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  # CUDA sources follow CMAKE_CXX_STANDARD (20: the engine's headers use std::span), but
  # CMake 3.25's tables stop at C++17 for nvcc; nvcc 12+ takes -std=c++20.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
endif()
