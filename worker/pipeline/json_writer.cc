#include "worker/pipeline/json_writer.h"

#include "formats/common/json_text.h"

namespace restack::pipeline {

void JsonWriter::appendString(std::string_view value) {
  appendJsonString(out_, value);
}

}  // namespace restack::pipeline
