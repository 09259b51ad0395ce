# The floors of the source tree, checked: a file includes its own part and the parts on the
# floors below it, never a part on its floor or above. Run by the build (the check_floors
# target) and by the tests on trees made to break it (tests/floors):
#   cmake -DROOT=<source tree> -P cmake/check_floors.cmake
# Prints every include that crosses a floor upward, as "file includes header (part X on
# floor N includes part Y on floor M)", and fails; prints nothing and succeeds otherwise.
# Two more rules, reported the same way: ui/ and app/ never include a core part's internal
# header (core/<part>/internal/attnlab/<part>/...), and no file (the tests too) reaches
# into another part's folder by a relative path ("../../core/attention/src/kernels.h"): a
# white-box test links the part's seam target and includes the header by its name.
# docs/architecture.md describes the floors and why each part sits where it does.
cmake_minimum_required(VERSION 3.22)

if(NOT DEFINED ROOT)
    message(FATAL_ERROR "check_floors: give the source tree as -DROOT=<folder>")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)

# Floor of each part, from the bottom. A part is a folder: core/<part> (its headers are
# included as "attnlab/<part>/..."), ui/<part> (included as "ui/<part>/...") and app.
set(floor_core_base 0)
set(floor_core_attention 1)
set(floor_core_io 2)
set(floor_core_lab 3)
set(floor_core_tokenizer 3)
set(floor_core_model 4)
set(floor_ui_widgets 10)
set(floor_ui_state 11)
set(floor_ui_views 12)
set(floor_ui_export 13)
set(floor_ui_window 14)
set(floor_app 20)

function(part_of_path path out)
    if(path MATCHES "^core/([a-z_]+)/")
        set(${out} "core_${CMAKE_MATCH_1}" PARENT_SCOPE)
    elseif(path MATCHES "^ui/([a-z_]+)/")
        set(${out} "ui_${CMAKE_MATCH_1}" PARENT_SCOPE)
    elseif(path MATCHES "^app/")
        set(${out} "app" PARENT_SCOPE)
    else()
        set(${out} "" PARENT_SCOPE)
    endif()
endfunction()

file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/core/*.h" "${ROOT}/core/*.cpp"
     "${ROOT}/core/*.inc" "${ROOT}/ui/*.h" "${ROOT}/ui/*.cpp" "${ROOT}/app/*.h"
     "${ROOT}/app/*.cpp")
# The tests are read for relative paths only (tests/floors holds the trees made to break
# the check, read when ROOT is one of them).
file(GLOB_RECURSE test_sources RELATIVE "${ROOT}" "${ROOT}/tests/*.h" "${ROOT}/tests/*.cpp")
list(FILTER test_sources EXCLUDE REGEX "^tests/floors/")
list(APPEND sources ${test_sources})
list(SORT sources)

# The core's internal headers, as they are included: "attnlab/<part>/<name>.h".
file(GLOB_RECURSE internal_headers RELATIVE "${ROOT}" "${ROOT}/core/*/internal/attnlab/*.h")
list(TRANSFORM internal_headers REPLACE "^core/[a-z_]+/internal/" "")

# Reports an include that names a path with ".." in it and lands in a part other than the
# includer's own (any part, for a file outside core/, ui/ and app/).
function(check_relative source from header)
    if(NOT header MATCHES "(^|/)\\.\\.(/|$)")
        return()
    endif()
    get_filename_component(dir "${ROOT}/${source}" DIRECTORY)
    get_filename_component(target "${header}" ABSOLUTE BASE_DIR "${dir}")
    file(RELATIVE_PATH target "${ROOT}" "${target}")
    part_of_path("${target}" to)
    if(NOT to STREQUAL "" AND NOT to STREQUAL from)
        string(REGEX REPLACE "^([a-z]+)_" "\\1/" to_name "${to}")
        set(problems ${problems}
            "${source} includes ${header} (a relative path into ${to_name}: include a part's public headers by their name, a white-box test a seam's headers by theirs)"
            PARENT_SCOPE)
    endif()
endfunction()

set(problems "")
foreach(source IN LISTS sources)
    part_of_path("${source}" from)
    if(from STREQUAL "")
        file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
        foreach(line IN LISTS lines)
            if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
                check_relative("${source}" "" "${CMAKE_MATCH_1}")
            endif()
        endforeach()
        continue()
    endif()
    if(NOT DEFINED floor_${from})
        list(APPEND problems "${source}: its folder is on no floor (add it to cmake/check_floors.cmake)")
        continue()
    endif()
    string(REGEX REPLACE "^([a-z]+)_" "\\1/" from_name "${from}") # core_base -> core/base
    file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
        if(NOT line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
            continue()
        endif()
        set(header "${CMAKE_MATCH_1}")
        check_relative("${source}" "${from}" "${header}")
        if(NOT from MATCHES "^core_" AND header IN_LIST internal_headers)
            string(REGEX REPLACE "^attnlab/([a-z_]+)/.*" "core/\\1" to_name "${header}")
            list(APPEND problems
                 "${source} includes ${header} (an internal header of ${to_name}, for the core's parts only, not ${from_name})")
            continue()
        endif()
        if(header MATCHES "^attnlab/([a-z_]+)/")
            set(to "core_${CMAKE_MATCH_1}")
        elseif(header MATCHES "^ui/([a-z_]+)/")
            set(to "ui_${CMAKE_MATCH_1}")
        else()
            continue() # a header beside the file, in its own part
        endif()
        if(to STREQUAL from)
            continue()
        endif()
        if(NOT DEFINED floor_${to})
            list(APPEND problems "${source} includes ${header}: a part on no floor")
            continue()
        endif()
        if(floor_${to} LESS floor_${from})
            continue()
        endif()
        string(REGEX REPLACE "^([a-z]+)_" "\\1/" to_name "${to}")
        list(APPEND problems
             "${source} includes ${header} (${from_name} on floor ${floor_${from}}, ${to_name} on floor ${floor_${to}})")
    endforeach()
endforeach()

if(problems)
    list(LENGTH problems count)
    string(REPLACE ";" "\n  " text "${problems}")
    message(FATAL_ERROR "check_floors: ${count} problem(s) with the floors:\n  ${text}")
endif()
