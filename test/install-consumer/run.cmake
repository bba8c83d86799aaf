# The ctest test dgemm-install-consumer: installs the build into a staging
# prefix, checks the installed tool runs, then configures, builds and runs
# test/install-consumer against that prefix with find_package(dgemm).
#   cmake -DDGEMM_BUILD_DIR=... -DSTAGE=... -DCONSUMER_SOURCE=... -P run.cmake
foreach(var DGEMM_BUILD_DIR STAGE CONSUMER_SOURCE)
  if(NOT ${var})
    message(FATAL_ERROR "run.cmake: -D${var}= is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE ${STAGE})
run(${CMAKE_COMMAND} --install ${DGEMM_BUILD_DIR} --prefix ${STAGE}/prefix)
foreach(file bin/dgemm-translate bin/dgemm-opt lib/libdgemm_runtime.so
        lib/libdgemm_runtime_static.a include/dgemm/Runtime/dgemm_runtime.h
        lib/cmake/dgemm/dgemmConfig.cmake
        lib/cmake/dgemm/dgemmConfigVersion.cmake
        share/dgemm/kernels/index.txt)
  if(NOT EXISTS ${STAGE}/prefix/${file})
    message(FATAL_ERROR "not installed: ${STAGE}/prefix/${file}")
  endif()
endforeach()
run(${STAGE}/prefix/bin/dgemm-translate --version)
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${STAGE}/build -G Ninja
    -DCMAKE_PREFIX_PATH=${STAGE}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${STAGE}/build)
run(${STAGE}/build/consumer_c)
run(${STAGE}/build/consumer_cxx)
