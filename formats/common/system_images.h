// Which native images belong to the operating system rather than to the app (iOS, Android).
//
// One answer for two readers: grouping (grouping/in_app.cc: system code is not in-app) and the
// native restorer (symbolstore/native/native_resolver.cc: an event does not wait for an OS
// image's symbols, which no app build uploads). The image is what the frame printed: a path
// ("/apex/com.android.runtime/lib64/bionic/libc.so", "/System/Library/Frameworks/UIKit…") or a
// bare image name ("UIKitCore", "libsystem_kernel.dylib").
//
// First answer wins:
//   1. a path inside the app (".app/", "/Bundle/Application/", "/data/app/", "/data/data/",
//      "/data/user/"): kApp, even for a library the app ships that shares a system image's name
//      (libc++_shared.so in an APK);
//   2. a system path ("/System/Library/", "/usr/lib/", "/system/", "/apex/", "/vendor/", …):
//      kSystemPath;
//   3. a known system image's name (UIKitCore, libsystem_*.dylib, libswift*, other lib*.dylib,
//      libc.so, libart.so, linker64, …): kSystemImage;
//   4. ART's compiled Java and the kernel's vDSO (".oat", ".vdex", "[vdso]"): kRuntime;
//   5. anything else: kOther (an app's own library, or one no list knows).
// Worked example: "/data/app/~~x==/com.shop-y==/lib/arm64/libc++_shared.so" -> kApp;
// "/apex/com.android.runtime/lib64/bionic/libc.so" -> kSystemPath; "UIKitCore" -> kSystemImage
// ("UIKitCore"); "libcodec.so" -> kOther.
#pragma once

#include <string_view>

namespace restack {

enum class NativeImageOrigin { kOther, kApp, kSystemPath, kSystemImage, kRuntime };

struct NativeImageClass {
  NativeImageOrigin origin = NativeImageOrigin::kOther;
  // kSystemImage and kRuntime: the image's file name, a view into the argument.
  std::string_view name;
};

NativeImageClass classifyNativeImage(std::string_view image);

// kSystemPath or kSystemImage: code of the operating system, whose symbols come (if at all) from
// shared uploads, never from the app's build.
inline bool isSystemImage(const NativeImageClass& image) {
  return image.origin == NativeImageOrigin::kSystemPath || image.origin == NativeImageOrigin::kSystemImage;
}

}  // namespace restack
