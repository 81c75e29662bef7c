#include "tests/native/native_fuzz_entry.h"

#include <string_view>

#include "formats/native/dwarf_walker.h"
#include "formats/native/native_object.h"
#include "formats/native/objc_metadata.h"
#include "formats/native/symbol_table.h"
#include "symbolstore/native/native_records.h"

namespace restack::native_test {

void fuzzNativeInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = native::NativeFile::fromBytes(bytes);
  if (file) {
    for (const native::ImageSlice& slice : (*file)->slices()) {
      auto symbols = native::readSymbolTable(slice);
      auto methods = native::readObjcMethods(slice);
      if (symbols) native::mergeObjcMethods(std::move(*symbols), std::move(methods));
      native::DwarfWalkOptions options;
      size_t functions = 0;
      (void)native::walkDwarf(slice, options, [&](const native::CompileUnitFunctions& unit) {
        functions += unit.functions.size();
        return Status::ok();
      });
    }
  }
  (void)native_store::decodeImage(bytes);
  (void)native_store::decodeFunction(0x1000, bytes);
  (void)native_store::decodeSymbolChunk(0x1000, bytes);
  (void)native_store::decodeStringBlock(bytes);
  (void)native_store::decodeIdList(bytes);
  (void)native_store::decodeAlias(bytes);
}

}  // namespace restack::native_test
