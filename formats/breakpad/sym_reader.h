// Streaming reader of Breakpad symbol files (`.sym` text, as written by Breakpad's and Mozilla's
// dump_syms and uploaded by Crashpad, Electron and game-engine pipelines).
//
// The file is memory-mapped (formats/common/mapped_file.h) and read one line at a time: records
// come out in file order as views into the mapping, so a multi-GB file costs no heap beyond the
// caller's own state. Errors are values that name the line ("app.sym line 12: FUNC: …").
//
// Worked example (the shape dump_syms 2.x writes for an x86_64 ELF .so):
//
//   MODULE Linux x86_64 0FE3B2A1C4D5E6F70123456789ABCDEF0 libdemo.so    -> Module
//   INFO CODE_ID A1B2E30FD5C4F7E60123456789ABCDEF01020304 libdemo.so    -> CodeId
//   INFO GENERATOR mozilla/dump_syms 2.3.9                             -> (skipped)
//   FILE 0 /src/demo.c                                                  -> File {0, "/src/demo.c"}
//   INLINE_ORIGIN 0 helper                                              -> InlineOrigin {0, "helper"}
//   FUNC m 1130 4e 0 run                                                -> Func {multiple, 0x1130, 0x4e, 0, "run"}
//   INLINE 0 9 0 0 1138 10                                              -> Inline {depth 0, call demo.c:9,
//                                                                          origin 0, [0x1138, 0x1148)}
//   1130 8 8 0                                                          -> Line {0x1130, 8, line 8, file 0}
//   1138 10 3 0                                                         -> Line {0x1138, 0x10, line 3, file 0}
//   PUBLIC m 1200 0 run_alias                                           -> Public {multiple, 0x1200, 0, "run_alias"}
//   STACK CFI INIT 1130 4e .cfa: $rsp 8 + .ra: .cfa -8 + ^              -> (skipped)
//
// Numbers: addresses, sizes and parameter sizes are hexadecimal without "0x"; line numbers,
// file and origin numbers and inline depths are decimal. The last field of MODULE, FILE,
// INLINE_ORIGIN, FUNC and PUBLIC (a name) runs to the end of the line and may hold spaces.
// Line records and INLINE records belong to the FUNC before them; the reader does not check
// that (the consumer knows which function is open). Tolerated, as real dump_syms output has
// them: the optional `m` flag of FUNC and PUBLIC, INLINE records of any depth and with several
// ranges, "\r\n" line ends, empty lines, a UTF-8 byte order mark, and every STACK (CFI and WIN)
// and INFO record other than CODE_ID, which are skipped. Anything else is an error.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "formats/common/mapped_file.h"
#include "formats/common/status.h"

namespace restack::breakpad {

struct ModuleRecord {
  std::string_view os;    // "Linux", "mac", "windows", "iOS", "Android" …
  std::string_view arch;  // "x86_64", "arm64", "armv7", "x86" …
  std::string_view id;    // debug id: 32 hex digits of GUID/UUID plus the age, as written
  std::string_view name;  // module file name: "libdemo.so", "Demo", "demo.pdb"
};
struct CodeIdRecord {  // INFO CODE_ID <code id> [<code file>]
  std::string_view code_id;
  std::string_view code_file;  // may be empty
};
struct FileRecord {
  uint64_t number = 0;
  std::string_view name;
};
struct InlineOriginRecord {
  uint64_t number = 0;
  std::string_view name;
};
struct FuncRecord {
  bool multiple = false;  // the `m` flag: several symbols share this code (identical code folding)
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t parameter_size = 0;
  std::string_view name;
};
struct AddressRange {
  uint64_t address = 0;
  uint64_t size = 0;
};
struct InlineRecord {
  uint32_t depth = 0;  // 0: inlined directly into the FUNC; n: into an inline of depth n-1
  uint32_t call_line = 0;
  uint64_t call_file = 0;                // FILE number of the call site
  uint64_t origin = 0;                   // INLINE_ORIGIN number: the inlined function's name
  std::span<const AddressRange> ranges;  // valid until the next call to SymReader::next
};
struct LineRecord {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t line = 0;
  uint64_t file = 0;  // FILE number
};
struct PublicRecord {
  bool multiple = false;
  uint64_t address = 0;
  uint64_t parameter_size = 0;
  std::string_view name;
};
struct EndOfFile {};

using Record = std::variant<EndOfFile, ModuleRecord, CodeIdRecord, FileRecord, InlineOriginRecord, FuncRecord,
                            InlineRecord, LineRecord, PublicRecord>;

// Parses a MODULE line (without its line end); a malformed_input error when it is not one.
Expected<ModuleRecord> parseModuleLine(std::string_view line);

// True when `head` (the first bytes of a file) starts with a well-formed MODULE line.
bool looksLikeSymFile(std::string_view head);

class SymReader {
 public:
  // Maps the file at `path`; `display_name` names it in messages (default: the path).
  static Expected<SymReader> open(const std::string& path, std::string display_name = "");
  // Reads `bytes`, which must outlive the reader.
  static SymReader fromBytes(std::string_view bytes, std::string display_name);

  SymReader(SymReader&&) noexcept = default;
  SymReader& operator=(SymReader&&) noexcept = default;

  // The next record, or EndOfFile once the text is exhausted (and on every call after that).
  // Views in the record point into the file and stay valid while the reader lives, except
  // InlineRecord::ranges (see there).
  Expected<Record> next();

  uint64_t lineNumber() const { return line_number_; }  // 1-based number of the last line read
  uint64_t bytesRead() const { return position_; }
  uint64_t size() const { return text_.size(); }
  const std::string& displayName() const { return display_name_; }

 private:
  SymReader() = default;
  Error error(std::string_view record, const std::string& message) const;
  Expected<Record> parseLine(std::string_view line);

  std::vector<MappedFile> file_;  // zero or one: keeps the mapping alive and movable
  std::string_view text_;
  size_t position_ = 0;
  uint64_t line_number_ = 0;
  std::string display_name_;
  std::vector<AddressRange> ranges_;
};

}  // namespace restack::breakpad
