# The client actor and the client API go into libpmix (included from bindings/c/CMakeLists.txt).
target_sources(pmix PRIVATE
  ${CMAKE_SOURCE_DIR}/actors/client/client_store.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/client_actor.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/node_fence.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/zmtp_connection.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/src/client_api.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/src/attached_client.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/src/client_jobctl.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/src/client_spawn.cpp)
target_link_libraries(pmix PRIVATE zpmix_runtime zpmix_fence_segment)
include(${CMAKE_SOURCE_DIR}/actors/client/events/events.cmake)
