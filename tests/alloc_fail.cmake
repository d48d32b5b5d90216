# test_alloc_fail fails the Nth allocation: its own link wraps the allocator
# (only this executable; jansson is routed there by json_set_alloc_funcs).
if(TARGET test_alloc_fail)
  target_link_options(test_alloc_fail PRIVATE
    -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=free)
endif()
