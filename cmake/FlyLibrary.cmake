# One library per lib/ folder, layered: a folder may use only the folders it
# declares (DEPENDS), and the graph of declarations has no cycle.
#
#   fly_add_library(<name> <sources...> [DEPENDS <fly libraries...>]
#                   [LINK <other libraries...>])
#
# makes an OBJECT library; FlySnapshot (lib/CMakeLists.txt) bundles them all
# into the one installed archive. fly_add_layering_checks() then links each
# library, with only what it declares (transitively), into a shared library
# with --no-undefined (targets <name>LayeringCheck, part of `all`): a use of a
# folder that is not declared fails the build instead of hiding in the
# archive.
function(fly_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK" ${ARGN})
  add_library(${name} OBJECT ${ARG_UNPARSED_ARGUMENTS})
  add_dependencies(${name} FlySnapshotPassIncGen)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  # Private headers live beside their sources (lib/<Folder>/X.h, included as
  # "<Folder>/X.h"); only include/ is installed. Another folder's private
  # header is for folders that declare it in DEPENDS.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/lib)
  set_property(GLOBAL PROPERTY FLY_DEPENDS_${name} ${ARG_DEPENDS})
  set_property(GLOBAL PROPERTY FLY_LINK_${name} ${ARG_LINK})
  set_property(GLOBAL APPEND PROPERTY FLY_LIBRARIES ${name})
endfunction()

function(fly_add_layering_checks)
  get_property(libraries GLOBAL PROPERTY FLY_LIBRARIES)
  foreach(library ${libraries})
    set(closure ${library})
    set(todo ${library})
    while(todo)
      list(POP_FRONT todo current)
      get_property(deps GLOBAL PROPERTY FLY_DEPENDS_${current})
      foreach(dep ${deps})
        if(NOT dep IN_LIST closure)
          list(APPEND closure ${dep})
          list(APPEND todo ${dep})
        endif()
      endforeach()
    endwhile()
    set(objects)
    set(links)
    foreach(member ${closure})
      list(APPEND objects $<TARGET_OBJECTS:${member}>)
      get_property(link GLOBAL PROPERTY FLY_LINK_${member})
      list(APPEND links ${link})
    endforeach()
    add_library(${library}LayeringCheck SHARED ${objects})
    target_link_libraries(${library}LayeringCheck PRIVATE ${links} MLIR LLVM)
    target_link_options(${library}LayeringCheck PRIVATE LINKER:--no-undefined
      "LINKER:--wrap=_ZN4llvm2cl25ResetAllOptionOccurrencesEv")
    set_target_properties(${library}LayeringCheck PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/layering-check)
  endforeach()
endfunction()
