# The client's event notification goes into libpmix (included from actors/client/client.cmake).
target_sources(pmix PRIVATE
  ${CMAKE_SOURCE_DIR}/actors/client/events/local_event.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/events/handler_registry.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/events/event_chain.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/events/stream_tracker.cpp
  ${CMAKE_SOURCE_DIR}/actors/client/events/client_events.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/src/client_events.cpp)
