// Corpus generator (corpus_generator.h): problems, builds, call paths and noise.
#include "loadtest/grouping/corpus_generator.h"

#include <map>
#include <random>
#include <set>

#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"
#include "grouping/sha256.h"

namespace restack::grouping::corpus {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(engine_() % n); }
  bool chance(double p) { return static_cast<double>(engine_() >> 11) / 9007199254740992.0 < p; }
  template <typename T>
  const T& pick(const std::vector<T>& values) {
    return values[below(values.size())];
  }
  std::string hex(size_t digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < digits; ++i) out += kHex[below(16)];
    return out;
  }

 private:
  std::mt19937_64 engine_;
};

enum class Family { kJava, kNative, kIos, kWeb, kReactNative };

const char* familyLabel(Family family) {
  switch (family) {
    case Family::kJava:
      return "android-java";
    case Family::kNative:
      return "android-native";
    case Family::kIos:
      return "ios";
    case Family::kWeb:
      return "web";
    case Family::kReactNative:
      break;
  }
  return "react-native";
}

const std::vector<std::string> kFeatures = {"cart", "feed",   "checkout", "profile", "search",
                                            "chat", "video",  "login",    "orders",  "wallet",
                                            "map",  "review", "coupon",   "live",    "settings"};
const std::vector<std::string> kNouns = {"Cart",    "Feed",    "Item",    "Order",   "User",    "Price",  "Coupon",
                                         "Banner",  "Video",   "Message", "Address", "Payment", "Review", "Image",
                                         "Token",   "Session", "Filter",  "Section", "Badge",   "Stock",  "Shipping",
                                         "Voucher", "Wallet",  "Seller",  "Rating"};
const std::vector<std::string> kVerbs = {"load",   "render", "apply",   "parse",   "update", "bind",  "fetch",
                                         "submit", "decode", "compute", "refresh", "select", "merge", "resolve",
                                         "open",   "close",  "save",    "restore", "notify", "track"};
const std::vector<std::string> kClassKinds = {"Presenter", "ViewModel", "Repository", "Adapter",
                                              "Fragment",  "Manager",   "Store",      "Controller"};

// A function identity; `render` prints it the way one build's restored frame shows it.
struct Fn {
  Family family;
  int style = 0;
  std::string owner;  // Java class, C++ scope, ObjC class / Swift type, JS file
  std::string name;   // method / selector / function
  uint32_t id = 0;
};

std::string ndkNamespace(int build) {
  return build <= 2 ? "__ndk1" : "__1";
}

std::string render(const Fn& fn, int build) {
  const std::string n = std::to_string(1 + (fn.id + build * 3) % 5);  // build-dependent number
  switch (fn.family) {
    case Family::kJava:
      switch (fn.style) {
        case 1:
          return fn.owner + ".lambda$" + fn.name + "$" + n;
        case 2:
          return fn.owner + "." + fn.name + (build % 2 ? "$lambda-" : "$lambda$") + n;
        case 3:
          return fn.owner + "$" + n + "." + fn.name;
        default:
          return fn.owner + "." + fn.name;
      }
    case Family::kNative: {
      const std::string ns = ndkNamespace(build);
      const std::string str = "std::" + ns + "::basic_string<char, std::" + ns + "::char_traits<char>, std::" + ns +
                              "::allocator<char> > const&";
      switch (fn.style) {
        case 1:
          return "std::" + ns + "::shared_ptr<shop::Item> " + fn.owner + "<shop::Item>::" + fn.name + "(" + str +
                 ") const";
        case 2:
          return fn.owner + "::" + fn.name + "()::{lambda(int)#" + n + "}::operator()(int) const";
        case 3:
          return "void " + fn.owner + "::" + fn.name + "(int, " + str + ")" + (build % 2 ? " [clone .cold]" : "");
        default:
          return "void " + fn.owner + "::" + fn.name + "(" + str + ")";
      }
    }
    case Family::kIos: {
      const std::string objc = "-[" + fn.owner + " " + fn.name + ":]";
      switch (fn.style) {
        case 1:
          return "__" + std::to_string(objc.size()) + objc + "_block_invoke" + (n == "1" ? "" : "_" + n);
        case 2:
          return "Shop." + fn.owner + "." + fn.name + "(_: Shop.Item) -> Swift.Bool";
        case 3:
          return std::string(build % 2 ? "" : "specialized ") + "Shop." + fn.owner + "." + fn.name +
                 "<A>(key: A) -> A?";
        case 4:
          return "closure #" + n + " in Shop." + fn.owner + "." + fn.name + "() -> ()";
        default:
          return objc;
      }
    }
    case Family::kWeb:
    case Family::kReactNative:
      if (fn.style == 2) return "";  // anonymous: named by its file
      if (fn.style == 1)
        return fn.owner.substr(fn.owner.rfind('/') + 1, fn.owner.rfind('.') - fn.owner.rfind('/') - 1) + "." + fn.name;
      return fn.name;
  }
  return fn.name;
}

GroupingFrame frameOf(const Fn& fn, int build, bool missing, Rng& rng) {
  GroupingFrame frame;
  frame.function = render(fn, build);
  switch (fn.family) {
    case Family::kJava:
      frame.kind = &javaRules();
      frame.file = "SourceFile";
      break;
    case Family::kNative:
      frame.kind = &nativeRules();
      frame.module = "libshop.so";
      break;
    case Family::kIos:
      frame.kind = &nativeRules();
      frame.module = "Shop";
      if (rng.chance(0.5)) frame.in_app = true;  // the restorer knows the image is the app's
      break;
    case Family::kWeb:
      frame.kind = &jsRules();
      frame.file = "webpack:///./" + fn.owner;
      if (rng.chance(0.2)) frame.function = "async " + frame.function;
      if (rng.chance(0.2) && !frame.function.empty()) frame.function = "Object." + frame.function;
      if (rng.chance(0.1) && !frame.function.empty()) frame.function += " [as handler]";
      break;
    case Family::kReactNative:
      frame.kind = &jsRules();
      frame.file = "/app/" + fn.owner;
      if (rng.chance(0.2)) frame.function = "async " + frame.function;
      break;
  }
  if (missing) {
    frame.state = FrameState::kMissingSymbols;
    if (fn.family == Family::kJava) {
      frame.function =
          std::string(1, char('a' + rng.below(26))) + "." + char('a' + rng.below(26)) + "." + char('a' + rng.below(26));
    } else if (fn.family == Family::kWeb || fn.family == Family::kReactNative) {
      frame.function = std::string(1, char('a' + rng.below(26)));
      frame.file = "https://shop.com/static/js/main." + rng.hex(8) + ".js";
    } else {
      frame.function.clear();
    }
  }
  return frame;
}

GroupingFrame sys(Family family, std::string function, std::string where = {}) {
  GroupingFrame frame;
  frame.function = std::move(function);
  if (family == Family::kJava) {
    frame.kind = &javaRules();
  } else if (family == Family::kWeb || family == Family::kReactNative) {
    frame.kind = &jsRules();
    frame.file = std::move(where);
  } else {
    frame.kind = &nativeRules();
    frame.module = std::move(where);
  }
  return frame;
}

// System / library frames that may sit between app frames.
GroupingFrame betweenNoise(Family family, int build, Rng& rng) {
  switch (family) {
    case Family::kJava: {
      static const std::vector<std::string> kFrames = {
          "android.view.View.performClick",
          "android.view.View$PerformClick.run",
          "java.lang.reflect.Method.invoke",
          "kotlinx.coroutines.DispatchedTask.run",
          "okhttp3.internal.connection.RealCall.execute",
          "androidx.lifecycle.LiveData.considerNotify",
          "io.reactivex.internal.operators.observable.ObservableMap$MapObserver.onNext",
          "androidx.recyclerview.widget.RecyclerView$Adapter.bindViewHolder",
          "com.google.gson.Gson.fromJson",
          "java.util.ArrayList.forEach",
          "kotlin.collections.CollectionsKt___CollectionsKt.map"};
      return sys(family, rng.pick(kFrames));
    }
    case Family::kNative: {
      static const std::vector<std::pair<std::string, std::string>> kFrames = {
          {"memcpy", "/apex/com.android.runtime/lib64/bionic/libc.so"},
          {"__memcpy_aarch64_simd", "/apex/com.android.runtime/lib64/bionic/libc.so"},
          {"strlen", "libc.so"},
          {"std::" + ndkNamespace(build) + "::__function::__func<void (*)(int), std::" + ndkNamespace(build) +
               "::allocator<void (*)(int)>, void (int)>::operator()(int&&)",
           "libc++_shared.so"},
          {"pthread_mutex_lock", "libc.so"}};
      const auto& [name, module] = rng.pick(kFrames);
      return sys(family, name, module);
    }
    case Family::kIos: {
      static const std::vector<std::pair<std::string, std::string>> kFrames = {
          {"_dispatch_call_block_and_release", "libdispatch.dylib"},
          {"_dispatch_client_callout", "libdispatch.dylib"},
          {"-[UIControl sendAction:to:forEvent:]", "UIKitCore"},
          {"__NSFireDelayedPerform", "Foundation"},
          {"-[NSArray enumerateObjectsUsingBlock:]", "CoreFoundation"}};
      if (rng.chance(0.3)) {  // compiler-outlined code inside the app image
        GroupingFrame outlined = sys(family, "_OUTLINED_FUNCTION_" + std::to_string(rng.below(90) + build), "Shop");
        return outlined;
      }
      const auto& [name, module] = rng.pick(kFrames);
      return sys(family, name, module);
    }
    case Family::kWeb: {
      static const std::vector<std::pair<std::string, std::string>> kFrames = {
          {"Array.map", "[native code]"},
          {"Array.forEach", "[native code]"},
          {"commitHookEffectListMount", "webpack:///./node_modules/react-dom/cjs/react-dom.production.min.js"},
          {"Promise.then", "[native code]"}};
      if (rng.chance(0.3)) {  // a vendor chunk frame the source map did not cover
        GroupingFrame vendor =
            sys(family, std::string(1, char('a' + rng.below(26))),
                "https://shop.com/static/js/vendors~main." + std::to_string(7000 + build) + "abcd.chunk.js");
        vendor.state = FrameState::kNotFound;
        return vendor;
      }
      const auto& [name, file] = rng.pick(kFrames);
      return sys(family, name, file);
    }
    case Family::kReactNative: {
      static const std::vector<std::pair<std::string, std::string>> kFrames = {
          {"tryCallOne", "/app/node_modules/promise/setimmediate/core.js"},
          {"forEach", "[native code]"},
          {"dispatchEvent", "/app/node_modules/react-native/Libraries/Renderer/ReactNativeRenderer-prod.js"}};
      const auto& [name, file] = rng.pick(kFrames);
      return sys(family, name, file);
    }
  }
  return {};
}

std::vector<GroupingFrame> topNoise(Family family, const std::string& type, Rng& rng) {
  std::vector<GroupingFrame> frames;
  switch (family) {
    case Family::kJava:
      if (type == "java.lang.IndexOutOfBoundsException") frames.push_back(sys(family, "java.util.ArrayList.get"));
      if (type == "java.lang.NumberFormatException") {
        frames.push_back(sys(family, "java.lang.Integer.parseInt"));
        frames.push_back(sys(family, "java.lang.Integer.parseInt"));
      }
      if (type == "java.lang.NullPointerException" && rng.chance(0.5)) {
        frames.push_back(sys(family, "java.util.Objects.requireNonNull"));
      }
      break;
    case Family::kNative:
      if (type == "SIGABRT") {
        frames.push_back(sys(family, "abort", "/apex/com.android.runtime/lib64/bionic/libc.so"));
        if (rng.chance(0.5)) frames.push_back(sys(family, "__cxa_throw", "libc++_shared.so"));
      }
      if (rng.chance(0.3)) {
        frames.insert(frames.begin(),
                      sys(family, "shop::crash::CrashHandler::onSignal(int, siginfo*, void*)", "libshop.so"));
      }
      break;
    case Family::kIos:
      if (type.rfind("NS", 0) == 0) {
        frames.push_back(sys(family, "__exceptionPreprocess", "CoreFoundation"));
        frames.push_back(sys(family, "objc_exception_throw", "libobjc.A.dylib"));
        if (type == "NSRangeException") frames.push_back(sys(family, "-[__NSArrayM objectAtIndex:]", "CoreFoundation"));
      } else if (rng.chance(0.5)) {
        frames.push_back(sys(family, "objc_msgSend", "libobjc.A.dylib"));
      }
      break;
    case Family::kWeb:
      if (rng.chance(0.1)) frames.push_back(sys(family, "hook", "chrome-extension://abcdefghijklmnop/content.js"));
      break;
    case Family::kReactNative:
      break;
  }
  return frames;
}

std::vector<GroupingFrame> bottomFrames(Family family, bool main_thread, Rng& rng) {
  std::vector<GroupingFrame> frames;
  auto add = [&](std::string name, std::string where = {}) {
    frames.push_back(sys(family, std::move(name), std::move(where)));
  };
  switch (family) {
    case Family::kJava:
      if (main_thread) {
        add("android.os.Handler.handleCallback");
        add("android.os.Handler.dispatchMessage");
        if (rng.chance(0.5)) add("android.os.Looper.loopOnce");
        add("android.os.Looper.loop");
        add("android.app.ActivityThread.main");
        add("java.lang.reflect.Method.invoke");
        add("com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run");
        add("com.android.internal.os.ZygoteInit.main");
      } else {
        add("java.util.concurrent.ThreadPoolExecutor.runWorker");
        add("java.util.concurrent.ThreadPoolExecutor$Worker.run");
        add("java.lang.Thread.run");
      }
      break;
    case Family::kNative:
      add("Java_com_shop_NativeBridge_call", "libshop.so");
      add("art_quick_generic_jni_trampoline", "/apex/com.android.art/lib64/libart.so");
      add("art::ArtMethod::Invoke(art::Thread*, unsigned int*, unsigned int, art::JValue*, char const*)",
          "/apex/com.android.art/lib64/libart.so");
      add("__pthread_start(void*)", "/apex/com.android.runtime/lib64/bionic/libc.so");
      add("__start_thread", "/apex/com.android.runtime/lib64/bionic/libc.so");
      break;
    case Family::kIos:
      add("-[UIApplication sendEvent:]", "UIKitCore");
      add("__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION__", "CoreFoundation");
      add("GSEventRunModal", "GraphicsServices");
      add("UIApplicationMain", "UIKitCore");
      add("main", "Shop");
      add("start", "dyld");
      break;
    case Family::kWeb:
      add("workLoop", "webpack:///./node_modules/scheduler/cjs/scheduler.production.min.js");
      add("performWorkUntilDeadline", "webpack:///./node_modules/scheduler/cjs/scheduler.production.min.js");
      break;
    case Family::kReactNative:
      add("__guard", "/app/node_modules/react-native/Libraries/BatchedBridge/MessageQueue.js");
      add("callFunctionReturnFlushedQueue", "/app/node_modules/react-native/Libraries/BatchedBridge/MessageQueue.js");
      break;
  }
  return frames;
}

const std::vector<std::string>& typesOf(Family family) {
  static const std::map<Family, std::vector<std::string>> kTypes = {
      {Family::kJava,
       {"java.lang.NullPointerException", "java.lang.IllegalStateException", "java.lang.IndexOutOfBoundsException",
        "java.lang.IllegalArgumentException", "java.lang.ClassCastException", "java.lang.NumberFormatException",
        "java.util.ConcurrentModificationException", "kotlin.UninitializedPropertyAccessException"}},
      {Family::kNative, {"SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE"}},
      {Family::kIos,
       {"NSInvalidArgumentException", "NSRangeException", "EXC_BAD_ACCESS (SIGSEGV)", "EXC_BREAKPOINT (SIGTRAP)",
        "NSInternalInconsistencyException"}},
      {Family::kWeb, {"TypeError", "ReferenceError", "RangeError", "Error"}},
      {Family::kReactNative, {"TypeError", "Error", "Invariant Violation"}},
  };
  return kTypes.at(family);
}

std::string messageFor(const std::string& type, Rng& rng) {
  switch (rng.below(4)) {
    case 0:
      return type + " while handling item " + std::to_string(rng.below(100000));
    case 1:
      return "Index " + std::to_string(rng.below(50)) + " out of bounds for length " + std::to_string(rng.below(50));
    case 2:
      return "user " + rng.hex(8) + "-" + rng.hex(4) + "-" + rng.hex(4) + "-" + rng.hex(4) + "-" + rng.hex(12) +
             " failed";
    default:
      return "Attempt to read from field on a null object reference at 0x" + rng.hex(8);
  }
}

// With the app's symbols missing, every frame of the app's own image / mapping is unrestored,
// including the bridges and entry points generated into it.
void dropAppSymbols(std::vector<GroupingFrame>& frames) {
  for (GroupingFrame& frame : frames) {
    const bool app =
        frame.module == "libshop.so" || frame.module == "Shop" || frame.function.rfind("com.shop.", 0) == 0;
    if (!app || frame.state == FrameState::kMissingSymbols) continue;
    frame.state = FrameState::kMissingSymbols;
    frame.function = frame.kind == &javaRules() ? "a.b.c" : "";
  }
}

struct Problem {
  Family family;
  std::string kind;  // crash | anr | lag | error
  std::string type;
  std::vector<Fn> chain;  // innermost first
  uint32_t id = 0;
};

class Generator {
 public:
  explicit Generator(const CorpusOptions& options) : options_(options), rng_(options.seed) {}

  std::vector<CorpusEvent> run() {
    std::vector<Problem> problems = makeProblems();
    // Zipf-like sizes, at least two events per problem so that a split can show.
    std::vector<double> weights(problems.size());
    double total = 0;
    for (size_t i = 0; i < problems.size(); ++i) total += weights[i] = 1.0 / std::pow(double(i % 97) + 3.0, 0.8);
    std::vector<size_t> counts(problems.size());
    size_t sum = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      sum += counts[i] = std::max<size_t>(2, size_t(double(options_.min_events) * weights[i] / total));
    }
    for (size_t i = 0; sum < options_.min_events; i = (i + 1) % problems.size(), ++sum) ++counts[i];
    std::vector<CorpusEvent> events;
    for (size_t i = 0; i < problems.size(); ++i) {
      const size_t count = counts[i];
      for (size_t e = 0; e < count; ++e) {
        events.push_back(makeEvent(problems[i]));
        events.back().input.event_id = std::to_string(events.size() - 1);  // index in the corpus
      }
    }
    return events;
  }

 private:
  Fn newFunction(Family family) {
    for (;;) {
      Fn fn;
      fn.family = family;
      fn.id = next_id_++;
      const std::string& feature = rng_.pick(kFeatures);
      const std::string noun = rng_.pick(kNouns);
      const std::string verb = rng_.pick(kVerbs);
      const std::string second = rng_.pick(kNouns);
      switch (family) {
        case Family::kJava:
          fn.owner = "com.shop." + feature + "." + noun + rng_.pick(kClassKinds);
          fn.name = verb + second;
          fn.style = int(rng_.below(4));
          break;
        case Family::kNative:
          fn.owner = "shop::" + feature + "::" + noun + rng_.pick(kClassKinds);
          fn.name = verb + second;
          fn.style = int(rng_.below(4));
          break;
        case Family::kIos:
          fn.owner = (rng_.chance(0.5) ? "SHP" : "") + noun + rng_.pick(kClassKinds);
          fn.name = verb + second;
          fn.style = int(rng_.below(5));
          break;
        case Family::kWeb:
        case Family::kReactNative:
          fn.owner = "src/" + feature + "/" + noun + rng_.pick(kClassKinds) + (family == Family::kWeb ? ".tsx" : ".js");
          fn.name = verb + second;
          fn.style = rng_.chance(0.1) ? 2 : int(rng_.below(2));
          break;
      }
      // One identity per (owner, name); anonymous JS functions need a file of their own.
      std::string key =
          std::to_string(int(family)) + fn.owner + (fn.style == 2 && family >= Family::kWeb ? "" : "." + fn.name);
      if (names_.insert(key).second) return fn;
    }
  }

  const Fn& poolFunction(Family family) {
    auto& pool = pools_[family];
    if (pool.size() < 40 || rng_.chance(0.3)) pool.push_back(newFunction(family));
    return pool[rng_.below(pool.size())];
  }

  std::vector<Problem> makeProblems() {
    std::vector<Problem> problems;
    std::set<std::string> seen;
    while (problems.size() < options_.problems) {
      Problem p;
      double r = static_cast<double>(rng_.below(1000)) / 1000.0;
      p.family = r < 0.35   ? Family::kJava
                 : r < 0.5  ? Family::kNative
                 : r < 0.75 ? Family::kIos
                 : r < 0.9  ? Family::kWeb
                            : Family::kReactNative;
      p.kind = "crash";
      if (p.family == Family::kJava) {
        double k = static_cast<double>(rng_.below(100)) / 100.0;
        p.kind = k < 0.8 ? "crash" : k < 0.9 ? "anr" : "lag";
      } else if (p.family == Family::kIos && rng_.chance(0.15)) {
        p.kind = "lag";
      } else if (p.family == Family::kWeb) {
        p.kind = "error";
      }
      p.type = (p.kind == "anr" || p.kind == "lag") ? "" : rng_.pick(typesOf(p.family));
      size_t length = rng_.chance(0.2) ? 1 : rng_.chance(0.25) ? 2 : 3;
      for (size_t i = 0; i < length; ++i) p.chain.push_back(poolFunction(p.family));
      std::string key = std::to_string(int(p.family)) + p.kind + p.type;
      std::set<uint32_t> distinct;
      for (const Fn& fn : p.chain) {
        key += "/" + std::to_string(fn.id);
        distinct.insert(fn.id);
      }
      if (distinct.size() != p.chain.size() || !seen.insert(key).second) continue;
      p.id = static_cast<uint32_t>(problems.size());
      problems.push_back(std::move(p));
    }
    return problems;
  }

  // The app frames of one occurrence: the chain with its build's decorations, noise between,
  // then (for a full chain) a random path of app callers.
  std::vector<GroupingFrame> appFrames(const Problem& p, int build, bool missing) {
    std::vector<GroupingFrame> frames;
    for (size_t i = 0; i < p.chain.size(); ++i) {
      const Fn& fn = p.chain[i];
      size_t repeats = (i == 0 && rng_.chance(0.15)) ? 1 + rng_.below(8) : 1;  // direct recursion
      for (size_t r = 0; r < repeats; ++r) frames.push_back(frameOf(fn, build, missing, rng_));
      appendCallNoise(fn, build, missing, frames);
    }
    if (p.chain.size() == 3) {
      size_t callers = rng_.below(7);
      for (size_t c = 0; c < callers; ++c) {
        const Fn& fn = poolFunction(p.family);
        frames.push_back(frameOf(fn, build, missing, rng_));
        appendCallNoise(fn, build, missing, frames);
      }
    }
    return frames;
  }

  // Frames the toolchain or a library puts between an app function and its caller.
  void appendCallNoise(const Fn& fn, int build, bool missing, std::vector<GroupingFrame>& frames) {
    const Family family = fn.family;
    if (family == Family::kJava) {
      if (fn.style == 1 || fn.style == 2) {  // lambda trampolines differ by toolchain
        const std::string cls = fn.owner;
        const std::string simple = cls.substr(cls.rfind('.') + 1);
        const std::string pkg = cls.substr(0, cls.rfind('.'));
        switch (build) {
          case 1:
            frames.push_back(sys(family, cls + "$$Lambda$" + std::to_string(10 + rng_.below(90)) + "/0x0000000800c0" +
                                             rng_.hex(4) + ".run"));
            break;
          case 2:
            frames.push_back(sys(family, cls + "$$ExternalSyntheticLambda" + std::to_string(rng_.below(4)) + ".run"));
            break;
          case 3:
            frames.push_back(sys(family, pkg + ".-$$Lambda$" + simple + "$" + rng_.hex(12) + ".run"));
            break;
          default:
            break;
        }
      }
      // App-generated bridges are unrestored too when the app's mapping is missing.
      auto bridge = [&](std::string name) {
        GroupingFrame frame = sys(family, std::move(name));
        if (missing) {
          frame.state = FrameState::kMissingSymbols;
          frame.function = "a.b." + std::string(1, char('a' + rng_.below(26)));
        }
        frames.push_back(std::move(frame));
      };
      if (fn.style == 0 && rng_.chance(0.2)) bridge(fn.owner + "." + fn.name + "$default");
      if (build <= 2 && rng_.chance(0.25)) bridge(fn.owner + ".access$" + std::to_string(rng_.below(9)) + "00");
    }
    if (rng_.chance(0.3)) frames.push_back(betweenNoise(family, build, rng_));
  }

  CorpusEvent makeEvent(const Problem& p) {
    CorpusEvent event;
    event.true_group = p.id;
    event.label = std::string(familyLabel(p.family)) + " " + p.kind;
    const int build = 1 + int(rng_.below(4));
    event.missing_symbols = rng_.chance(options_.missing_symbols_share);
    GroupingInput& input = event.input;
    input.app = "shop";
    input.platform = p.family == Family::kIos           ? "ios"
                     : p.family == Family::kWeb         ? "web"
                     : p.family == Family::kReactNative ? "react_native"
                                                        : "android";
    input.kind = p.kind;
    input.build_id = "1." + std::to_string(build);
    input.exception_type = p.type;
    if (!p.type.empty()) input.exception_message = messageFor(p.type, rng_);
    const bool main_thread = p.kind != "crash" || rng_.chance(0.6) || p.family == Family::kIos;

    if (p.kind == "lag") {
      makeLagSamples(p, build, event.missing_symbols, input);
      return event;
    }
    std::vector<GroupingFrame> frames;
    if (p.kind == "anr") {
      static const std::vector<std::vector<std::string>> kBlocking = {
          {"android.database.sqlite.SQLiteConnection.nativeExecuteForCursorWindow",
           "android.database.sqlite.SQLiteConnection.executeForCursorWindow"},
          {"java.lang.Object.wait", "java.lang.Thread.join"},
          {"sun.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park"},
          {"java.io.FileInputStream.read"}};
      for (const auto& name : rng_.pick(kBlocking)) frames.push_back(sys(p.family, name));
      input.exception_type = "ANR";
      input.exception_message =
          "Input dispatching timed out (Waiting " + std::to_string(5000 + rng_.below(3000)) + "ms)";
    } else {
      frames = topNoise(p.family, p.type, rng_);
    }
    for (auto& frame : appFrames(p, build, event.missing_symbols)) frames.push_back(std::move(frame));
    size_t framework = rng_.below(3);
    for (size_t f = 0; f < framework; ++f) frames.push_back(betweenNoise(p.family, build, rng_));
    for (auto& frame : bottomFrames(p.family, main_thread, rng_)) frames.push_back(std::move(frame));

    if (event.missing_symbols) dropAppSymbols(frames);
    GroupingThread thread;
    thread.name = main_thread ? "main" : "pool-2-thread-" + std::to_string(1 + rng_.below(4));
    thread.crashed = p.kind != "anr";
    thread.frames = std::move(frames);
    // Other threads: idle workers with framework frames only.
    size_t others = rng_.below(3);
    for (size_t t = 0; t < others; ++t) {
      GroupingThread idle;
      idle.name = "worker-" + std::to_string(t);
      idle.frames = bottomFrames(p.family, false, rng_);
      input.threads.push_back(std::move(idle));
    }
    input.threads.insert(input.threads.begin() + long(rng_.below(input.threads.size() + 1)), std::move(thread));

    // Some Java crashes arrive wrapped: the app frames sit in a "Caused by:" section.
    if (p.family == Family::kJava && p.kind == "crash" && rng_.chance(0.15)) {
      for (auto& t : input.threads) {
        if (!t.crashed) continue;
        input.causes.push_back({input.exception_type, input.exception_message, t.frames});
        t.frames = {sys(p.family, "android.app.ActivityThread.performLaunchActivity"),
                    sys(p.family, "android.app.ActivityThread.handleLaunchActivity")};
        input.exception_type = "java.lang.RuntimeException";
        input.exception_message = "Unable to start activity ComponentInfo{com.shop/com.shop.MainActivity}";
      }
    }
    return event;
  }

  void makeLagSamples(const Problem& p, int build, bool missing, GroupingInput& input) {
    std::vector<GroupingFrame> hot = appFrames(p, build, missing);
    for (auto& frame : bottomFrames(p.family, true, rng_)) hot.push_back(std::move(frame));
    if (missing) dropAppSymbols(hot);
    size_t count = 5 + rng_.below(16);
    double hot_share = 0.6 + 0.3 * static_cast<double>(rng_.below(100)) / 100.0;
    std::vector<Fn> leaves;
    for (int i = 0; i < 6; ++i) leaves.push_back(poolFunction(p.family));
    for (size_t s = 0; s < count; ++s) {
      GroupingSample sample;
      sample.timestamp_ms = 1700000000000 + s * 50;
      if (rng_.chance(hot_share)) {
        if (rng_.chance(0.3)) {  // the hot code called into another app function
          sample.frames.push_back(frameOf(rng_.pick(leaves), build, missing, rng_));
        } else if (rng_.chance(0.6)) {
          sample.frames.push_back(betweenNoise(p.family, build, rng_));
        }
        sample.frames.insert(sample.frames.end(), hot.begin(), hot.end());
      } else {
        sample.frames = bottomFrames(p.family, true, rng_);  // idle or elsewhere
        sample.frames.insert(
            sample.frames.begin(),
            sys(p.family, p.family == Family::kJava ? "android.os.MessageQueue.nativePollOnce" : "mach_msg2_trap",
                p.family == Family::kJava ? "" : "libsystem_kernel.dylib"));
      }
      input.samples.push_back(std::move(sample));
    }
    GroupingThread main;
    main.name = "main";
    main.main = true;
    main.frames = input.samples.front().frames;
    input.threads.push_back(std::move(main));
  }

  const CorpusOptions& options_;
  Rng rng_;
  uint32_t next_id_ = 0;
  std::set<std::string> names_;
  std::map<Family, std::vector<Fn>> pools_;
};

}  // namespace

std::vector<CorpusEvent> generateCorpus(const CorpusOptions& options) {
  return Generator(options).run();
}

std::vector<SplitMergeRow> evaluate(const std::vector<CorpusEvent>& events,
                                    const std::function<std::string(const CorpusEvent&)>& fingerprint) {
  struct Tally {
    std::map<uint32_t, std::set<std::string>> fingerprints_of_problem;
    std::map<std::string, std::set<uint32_t>> problems_of_fingerprint;
    size_t events = 0;
  };
  std::map<std::string, Tally> by_label;
  Tally all;
  for (const CorpusEvent& event : events) {
    const std::string fp = fingerprint(event);
    for (Tally* tally : {&by_label[event.label], &all}) {
      tally->fingerprints_of_problem[event.true_group].insert(fp);
      tally->problems_of_fingerprint[fp].insert(event.true_group);
      ++tally->events;
    }
  }
  auto row = [](const std::string& label, const Tally& tally) {
    SplitMergeRow out;
    out.label = label;
    out.events = tally.events;
    out.problems = tally.fingerprints_of_problem.size();
    out.fingerprints = tally.problems_of_fingerprint.size();
    for (const auto& [problem, fps] : tally.fingerprints_of_problem) out.split_problems += fps.size() > 1;
    for (const auto& [fp, problems] : tally.problems_of_fingerprint) out.merged_fingerprints += problems.size() > 1;
    return out;
  };
  std::vector<SplitMergeRow> rows;
  for (const auto& [label, tally] : by_label) rows.push_back(row(label, tally));
  rows.push_back(row("all", all));
  return rows;
}

std::string naiveFingerprint(const CorpusEvent& event) {
  const GroupingInput& input = event.input;
  std::string key = input.kind + "|" + input.exception_type;
  const std::vector<GroupingFrame>* frames = nullptr;
  if (input.kind == "lag" && !input.samples.empty()) {
    frames = &input.samples.front().frames;
  } else {
    for (const auto& thread : input.threads) {
      if (thread.crashed || (input.kind == "anr" && thread.name == "main")) frames = &thread.frames;
    }
  }
  if (frames != nullptr) {
    for (size_t i = 0; i < frames->size() && i < 3; ++i) key += "|" + (*frames)[i].function;
  }
  Sha256 sha;
  sha.update(key);
  return toHex(sha.finish(), 16);
}

}  // namespace restack::grouping::corpus
