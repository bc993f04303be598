# The generated modules shipped in the dmlserve package against those the
# build generates from proto/ (target dmls_python_stubs, in GENERATED):
#   cmake -DGENERATED=build/python -DPACKAGE=client/python/dmlserve
#         [-DUPDATE=ON] -P client/python/check_stubs.cmake
# fails (ctest client_python_stubs_current) when they differ; UPDATE=ON
# copies the generated ones over (then commit them).
set(_pairs
  "dmlserve/v1/dmlserve_pb2.py" "v1/dmlserve_pb2.py"
  "dmlserve/v1/dmlserve_pb2.pyi" "v1/dmlserve_pb2.pyi"
  "dmlserve/v1/dmlserve_pb2_grpc.py" "v1/dmlserve_pb2_grpc.py"
  "google/rpc/status_pb2.py" "_rpc/status_pb2.py"
  "google/rpc/error_details_pb2.py" "_rpc/error_details_pb2.py")
set(_stale "")
while(_pairs)
  list(POP_FRONT _pairs _generated _shipped)
  if(UPDATE)
    file(COPY_FILE ${GENERATED}/${_generated} ${PACKAGE}/${_shipped})
    continue()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
                  ${GENERATED}/${_generated} ${PACKAGE}/${_shipped}
                  RESULT_VARIABLE _differs)
  if(_differs)
    list(APPEND _stale ${_shipped})
  endif()
endwhile()
if(_stale)
  message(FATAL_ERROR "client/python/dmlserve/{${_stale}} differ from what "
          "proto/ generates: cmake --build build --target "
          "dmls_python_stubs_update, then commit them")
endif()
