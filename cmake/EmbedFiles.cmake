# Generates a C++ source holding the bytes of every file under DIR, as restack::demo::kEmbeddedFiles.
# Run in script mode: cmake -DDIR=… -DOUT=… -P EmbedFiles.cmake
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/*)
list(SORT files)
set(body "")
foreach(name ${files})
  file(READ ${DIR}/${name} hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${hex}")
  # Split the literal so no single line is huge.
  string(REGEX REPLACE "((\\\\x[0-9a-f][0-9a-f]){64})" "\\1\"\n    \"" escaped "${escaped}")
  string(APPEND body "  {\"${name}\", std::string_view(\"${escaped}\", ${size})},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from ${DIR} by cmake/EmbedFiles.cmake. Do not edit.\n#include \"worker/demo/embedded_files.h\"\n\nnamespace restack::demo {\n\nconst std::vector<EmbeddedFile> kEmbeddedFiles = {\n${body}};\n\n}  // namespace restack::demo\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
