// Which native images belong to the operating system (system_images.h).
#include "formats/common/system_images.h"

namespace restack {
namespace {

constexpr std::string_view kSystemPathMarkers[] = {"/System/Library/",
                                                   "/usr/lib/",
                                                   "/Developer/",
                                                   "/system/",
                                                   "/apex/",
                                                   "/vendor/",
                                                   "/Library/Developer/CoreSimulator/",
                                                   "/lib/x86_64-linux-gnu/",
                                                   "/lib/aarch64-linux-gnu/"};

constexpr std::string_view kAppPathMarkers[] = {".app/", "/Bundle/Application/", "/data/app/", "/data/data/",
                                                "/data/user/"};

// System images named without a path (SDK frames print only the image name).
constexpr std::string_view kSystemImages[] = {
    // iOS / macOS
    "UIKitCore", "UIKit", "Foundation", "CoreFoundation", "GraphicsServices", "QuartzCore", "CoreGraphics", "CFNetwork",
    "WebKit", "JavaScriptCore", "libdispatch.dylib", "libobjc.A.dylib", "libdyld.dylib", "dyld",
    "libsystem_kernel.dylib", "libsystem_pthread.dylib", "libsystem_c.dylib", "libsystem_platform.dylib",
    "libsystem_malloc.dylib", "libc++abi.dylib", "libc++.1.dylib", "libswiftCore.dylib", "libswift_Concurrency.dylib",
    "SwiftUI", "AVFoundation", "CoreData", "Security", "CoreText", "ImageIO", "Metal", "AudioToolbox", "CoreMedia",
    "MapKit", "StoreKit", "FrontBoardServices", "BaseBoard", "RunningBoardServices", "libxpc.dylib",
    // Android
    "libc.so", "libm.so", "libdl.so", "libart.so", "libartbase.so", "libandroid_runtime.so", "libutils.so",
    "libbinder.so", "libhwui.so", "libgui.so", "libbase.so", "liblog.so", "libcutils.so", "libandroid.so", "libEGL.so",
    "libc++.so", "libc++_shared.so", "linker", "linker64", "libjavacore.so", "libopenjdk.so"};

std::string_view basename(std::string_view path) {
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool containsAny(std::string_view text, const auto& markers) {
  for (std::string_view marker : markers) {
    if (text.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

NativeImageClass classifyNativeImage(std::string_view image) {
  if (image.empty()) return {};
  if (containsAny(image, kAppPathMarkers)) return {NativeImageOrigin::kApp, {}};
  if (containsAny(image, kSystemPathMarkers)) return {NativeImageOrigin::kSystemPath, {}};
  const std::string_view base = basename(image);
  for (std::string_view known : kSystemImages) {
    if (base == known) return {NativeImageOrigin::kSystemImage, base};
  }
  if (base.starts_with("libsystem_") || base.starts_with("libswift") ||
      (base.starts_with("lib") && base.ends_with(".dylib"))) {
    return {NativeImageOrigin::kSystemImage, base};
  }
  if (base.ends_with(".oat") || base.ends_with(".vdex") || base == "[vdso]") {
    return {NativeImageOrigin::kRuntime, base};
  }
  return {};
}

}  // namespace restack
