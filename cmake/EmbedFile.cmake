# pipewright_embed_text(<output.cpp> <input file> <C++ symbol>)
# Compiles a text asset into the program, so installed and build-tree
# binaries always carry the same catalog. Re-runs when the input changes.
function(pipewright_embed_text output input symbol)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${input}")
  file(READ "${input}" PIPEWRIGHT_EMBED_CONTENT)
  set(PIPEWRIGHT_EMBED_SYMBOL "${symbol}")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/embedded_text.cpp.in" "${output}" @ONLY)
endfunction()
