#include "symbolstore/frame_lookup.h"

namespace restack {

const char* frameStatusName(FrameStatus status) {
  switch (status) {
    case FrameStatus::kSymbolicated:
      return "symbolicated";
    case FrameStatus::kMissingSymbols:
      return "missing_symbols";
    case FrameStatus::kNotFound:
      return "not_found";
    case FrameStatus::kUnparsed:
      return "unparsed";
  }
  return "unparsed";
}

const char* frameReasonName(FrameReason reason) {
  switch (reason) {
    case FrameReason::kNone:
    case FrameReason::kCount:
      return "";
    case FrameReason::kMissingSymbols:
      return "missing_symbols";
    case FrameReason::kMalformedSymbols:
      return "malformed_symbols";
    case FrameReason::kAddressOutsideModule:
      return "address_outside_module";
    case FrameReason::kPositionNotMapped:
      return "position_not_mapped";
    case FrameReason::kNoPosition:
      return "no_position";
    case FrameReason::kBundleUnknown:
      return "bundle_unknown";
    case FrameReason::kRuntimeCode:
      return "runtime_code";
    case FrameReason::kNotCovered:
      return "not_covered";
    case FrameReason::kUnparsed:
      return "unparsed";
    case FrameReason::kFrameLimit:
      return "frame_limit";
    case FrameReason::kNoLineInfo:
      return "no_line_info";
    case FrameReason::kAmbiguous:
      return "ambiguous";
    case FrameReason::kDemangleFailed:
      return "demangle_failed";
    case FrameReason::kMethodNotMapped:
      return "method_not_mapped";
    case FrameReason::kSystemImage:
      return "system_image";
  }
  return "";
}

FrameStatus frameReasonStatus(FrameReason reason) {
  switch (reason) {
    case FrameReason::kMissingSymbols:
    case FrameReason::kSystemImage:
      return FrameStatus::kMissingSymbols;
    case FrameReason::kMalformedSymbols:
    case FrameReason::kAddressOutsideModule:
    case FrameReason::kPositionNotMapped:
    case FrameReason::kNoPosition:
    case FrameReason::kBundleUnknown:
    case FrameReason::kRuntimeCode:
    case FrameReason::kNotCovered:
      return FrameStatus::kNotFound;
    case FrameReason::kUnparsed:
    case FrameReason::kFrameLimit:
      return FrameStatus::kUnparsed;
    case FrameReason::kNone:
    case FrameReason::kNoLineInfo:
    case FrameReason::kAmbiguous:
    case FrameReason::kDemangleFailed:
    case FrameReason::kMethodNotMapped:
    case FrameReason::kCount:
      return FrameStatus::kSymbolicated;
  }
  return FrameStatus::kSymbolicated;
}

FrameReason defaultFrameReason(FrameStatus status) {
  switch (status) {
    case FrameStatus::kSymbolicated:
      return FrameReason::kNone;
    case FrameStatus::kMissingSymbols:
      return FrameReason::kMissingSymbols;
    case FrameStatus::kNotFound:
      return FrameReason::kNotCovered;
    case FrameStatus::kUnparsed:
      return FrameReason::kUnparsed;
  }
  return FrameReason::kNotCovered;
}

const char* missingIdKindName(MissingIdKind kind) {
  switch (kind) {
    case MissingIdKind::kNone:
      return "";
    case MissingIdKind::kDebugId:
      return "debug_id";
    case MissingIdKind::kModule:
      return "module";
    case MissingIdKind::kAppBuild:
      return "app_build";
    case MissingIdKind::kMapId:
      return "pg_map_id";
    case MissingIdKind::kBundle:
      return "bundle";
  }
  return "";
}

std::string notRestoredText(std::string_view reason, std::string_view missing_id_kind, std::string_view missing_id) {
  std::string text = "not restored: ";
  text += reason;
  if (!missing_id.empty()) {
    text += ' ';
    if (!missing_id_kind.empty()) {
      text += missing_id_kind;
      text += ' ';
    }
    text += missing_id;
  }
  return text;
}

}  // namespace restack
