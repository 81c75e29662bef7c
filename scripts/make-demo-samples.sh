#!/usr/bin/env bash
# Regenerates the `restack demo` samples in worker/demo/samples/ from small real programs, one
# per stack kind Restack restores, built and (where this machine can run them) run with the tools
# scripts/setup.sh installs:
#   iOS             C + Objective-C at -O2 (inlining) -> arm64 Mach-O app (clang-19, ld64.lld-19),
#                   its dSYM (dsymutil-19), zipped; frames computed from the binary
#                   (llvm-objdump-19, llvm-symbolizer-19) since arm64 iOS code cannot run here
#   Android native  C at -O2 -> aarch64 libdemo.so with a GNU build id; frames computed likewise
#   Android Java    Java app + stand-ins for android.os/android.view/android.app, obfuscated by
#                   ProGuard 7 (.deps/proguard); crash, ANR and lag stacks captured by running the
#                   obfuscated jar
#   Web H5          esbuild-minified bundle + source map; V8 stack captured by running the bundle
#                   in node under its CDN URL
#   React Native    esbuild bundle -> Hermes bytecode (hermesc, .deps/node) + Metro-composed map;
#                   Hermes stack captured by running the bytecode in the hermes VM
# Writes manifest.json (the symbol uploads) and events.jsonl (one raw event per case, docs/design.md
# §3). The program sources live in this script. See worker/demo/samples/README.md.
#
# Usage: scripts/make-demo-samples.sh        (needs `scripts/setup.sh` to have run)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
samples=$repo/worker/demo/samples
node_modules=$repo/.deps/node/node_modules
hermes_bin=$node_modules/hermes-engine-cli/linux64-bin
proguard_lib=$repo/.deps/proguard/lib

for tool in clang-19 ld64.lld-19 ld.lld-19 dsymutil-19 llvm-objdump-19 llvm-nm-19 llvm-readelf-19 \
  llvm-symbolizer-19 llvm-dwarfdump-19 javac jar java node; do
  command -v "$tool" >/dev/null || { echo "make-demo-samples.sh: $tool is missing; run scripts/setup.sh" >&2; exit 1; }
done
for path in "$proguard_lib" "$node_modules/.bin/esbuild" "$hermes_bin/hermesc" "$node_modules/metro-source-map"; do
  [[ -e $path ]] || { echo "make-demo-samples.sh: $path is missing; run scripts/setup.sh" >&2; exit 1; }
done

work=$(mktemp -d /tmp/restack-demo-samples.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/facts"
facts=$work/facts
export ZERO_AR_DATE=1  # no timestamps in Mach-O debug maps: same inputs, same UUID

# --- helpers ------------------------------------------------------------------------------------

# Addresses of the instructions of FUNCTION in BINARY whose mnemonic matches REGEX, in order.
instructions() {  # binary function mnemonic-regex
  llvm-objdump-19 -d --no-show-raw-insn --disassemble-symbols="$2" "$1" |
    awk -v re="$3" '$1 ~ /^[0-9a-f]+:$/ && $2 ~ re { sub(":", "", $1); print "0x" $1 }'
}

# The first instruction of FUNCTION matching REGEX whose innermost (inlined) function, per
# llvm-symbolizer over DEBUG, is INNER.
first_in_inlined() {  # binary debug-file function mnemonic-regex inner
  local address
  for address in $(instructions "$1" "$3" "$4"); do
    if [[ $(llvm-symbolizer-19 --inlines --obj="$2" "$address" | sed -n 1p) == "$5" ]]; then
      echo "$address"
      return
    fi
  done
  echo "make-demo-samples.sh: no '$4' instruction of $3 inlined from $5" >&2
  exit 1
}

# The return address of the first call (bl) in FUNCTION: what a non-crashing frame holds.
return_address() {  # binary function
  local call
  call=$(instructions "$1" "$2" '^bl$' | sed -n 1p)
  [[ -n $call ]] || { echo "make-demo-samples.sh: $2 makes no call" >&2; exit 1; }
  printf '0x%x\n' $((call + 4))
}

# What llvm-symbolizer says about ADDRESS (return addresses looked up at address - 1), for the log.
explain() {  # debug-file address is-return
  local address=$2
  [[ $3 == 1 ]] && address=$(printf '0x%x' $((address - 1)))
  llvm-symbolizer-19 --inlines --obj="$1" "$address" | awk 'NF { printf "      %s\n", $0 }'
}

# --- iOS: arm64 app + dSYM --------------------------------------------------------------------------
ios() {
  local dir=$work/ios
  mkdir -p "$dir/src"
  cat >"$dir/src/Cart.h" <<'EOF'
// Shopping cart model (plain C).
struct line_item {
  const char *sku;
  long unit_price_cents;
  int quantity;
};

struct cart {
  struct line_item *items[16];
  int count;
  long discount_cents;
};

long cart_total(const struct cart *cart);
EOF
  cat >"$dir/src/Cart.c" <<'EOF'
#include "Cart.h"

static inline long line_price(const struct line_item *item) {
  return item->unit_price_cents * item->quantity;
}

static inline long apply_discount(long total, long discount) {
  return total > discount ? total - discount : 0;
}

long cart_total(const struct cart *cart) {
  long total = 0;
  for (int i = 0; i < cart->count; ++i) {
    total += line_price(cart->items[i]);
  }
  return apply_discount(total, cart->discount_cents);
}
EOF
  cat >"$dir/src/CheckoutViewController.m" <<'EOF'
#include "Cart.h"

// No Foundation/UIKit SDK here: a root class stands in for the UIViewController subclass.
__attribute__((objc_root_class))
@interface CheckoutViewController {
  struct cart _cart;
  long _lastTotal;
}
- (void)didTapPay:(id)sender;
- (long)checkout;
@end

static inline long checked_total(const struct cart *cart) {
  long total = cart_total(cart);
  return total < 0 ? 0 : total;
}

@implementation CheckoutViewController

- (long)checkout {
  long total = checked_total(&_cart);
  _lastTotal = total;
  return total;
}

- (void)didTapPay:(id)sender {
  if (sender == 0) return;
  long total = [self checkout];
  _lastTotal = total + 1;
}

@end
EOF
  cat >"$dir/src/main.m" <<'EOF'
extern int UIApplicationMain(int argc, char *argv[], void *principalClassName, void *delegateClassName);

__attribute__((disable_tail_calls)) int main(int argc, char *argv[]) {
  return UIApplicationMain(argc, argv, 0, 0);
}
EOF
  local objects=() source
  for source in Cart.c CheckoutViewController.m main.m; do
    (cd "$dir/src" && clang-19 --target=arm64-apple-ios14 -g -O2 -fobjc-runtime=ios-14 \
      -fdebug-prefix-map="$dir/src=/Users/dev/DemoApp/DemoApp" -c "$source" -o "$dir/${source%.*}.o")
    objects+=("$dir/${source%.*}.o")
  done
  # An app executable (MH_EXECUTE, __TEXT at 0x100000000); UIKit and the ObjC runtime are bound
  # at run time. The debug map names the .o files relative to $dir (-oso_prefix), so the same
  # sources give the same binary and UUID wherever they are built.
  clang-19 --target=arm64-apple-ios14 -fuse-ld=lld -nostdlib -Wl,-undefined,dynamic_lookup \
    -Wl,-oso_prefix,"$dir/" "${objects[@]}" -o "$dir/DemoApp"
  (cd "$dir" && dsymutil-19 DemoApp -o DemoApp.app.dSYM)
  mkdir -p "$samples/ios"
  # Zipped with fixed timestamps (jar writes no access/creation times), so the zip is reproducible.
  find "$dir/DemoApp.app.dSYM" -exec touch -h -d '2024-01-01 00:00:00 UTC' {} +
  rm -f "$samples/ios/DemoApp.app.dSYM.zip"
  (cd "$dir" && jar cfM "$samples/ios/DemoApp.app.dSYM.zip" DemoApp.app.dSYM)

  local dwarf=$dir/DemoApp.app.dSYM/Contents/Resources/DWARF/DemoApp
  local uuid text_vmaddr
  uuid=$(llvm-dwarfdump-19 --uuid "$dwarf" | awk 'NR == 1 { print tolower($2) }')
  text_vmaddr=$(llvm-objdump-19 --macho --private-headers "$dir/DemoApp" |
    awk '$1 == "segname" && $2 == "__TEXT" { getline; print $2 }' | sed -n 1p)
  # The crash: cart->items[1] is NULL; line_price() (inlined into cart_total) reads
  # item->unit_price_cents at 0x8.
  local crash_pc checkout_ret tap_ret main_ret
  crash_pc=$(first_in_inlined "$dir/DemoApp" "$dwarf" _cart_total '^ldr$' line_price)
  checkout_ret=$(return_address "$dir/DemoApp" '-[CheckoutViewController checkout]')
  tap_ret=$(return_address "$dir/DemoApp" '-[CheckoutViewController didTapPay:]')
  main_ret=$(return_address "$dir/DemoApp" _main)
  # The SDK's form: image, runtime address, load address + decimal offset, image UUID. The app
  # was loaded at 0x104a14000 (ASLR); UIKitCore's frame is an image nobody uploaded.
  local load=0x104a14000
  frame() {  # address
    local offset=$(($1 - text_vmaddr))
    printf 'DemoApp  0x%016x 0x%x + %d [%s]\n' $((load + offset)) $load $offset "$uuid"
  }
  {
    frame "$crash_pc"
    frame "$checkout_ret"
    frame "$tap_ret"
    printf 'UIKitCore  0x%016x 0x%x + %d [%s]\n' $((0x1a8d2c000 + 0x3c95a4)) 0x1a8d2c000 $((0x3c95a4)) \
      7f3a2c1e-5b8d-3e4f-9a6b-2c1d0e9f8a7b
    frame "$main_ret"
  } >"$facts/ios.stack"
  echo "iOS: DemoApp $uuid, dSYM $(stat -c %s "$samples/ios/DemoApp.app.dSYM.zip") bytes zipped"
  local address is_return=0
  for address in "$crash_pc" "$checkout_ret" "$tap_ret" "$main_ret"; do
    echo "    $address$([[ $is_return == 1 ]] && echo ' (return address)')"
    explain "$dwarf" "$address" "$is_return"
    is_return=1
  done
}

# --- Android native: aarch64 libdemo.so with a build id ---------------------------------------------
android_native() {
  local dir=$work/android
  mkdir -p "$dir/src"
  cat >"$dir/src/image_decoder.c" <<'EOF'
// Minimal image decoder behind the demo app's JNI bridge (no system headers: no NDK here).
typedef unsigned char u8;
typedef unsigned int u32;

struct frame {
  const u8 *pixels;
  int width;
  int height;
  int stride;
};

static inline u32 read_pixel(const struct frame *frame, int x, int y) {
  const u8 *p = frame->pixels + y * frame->stride + x * 4;
  return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u32 luminance(u32 rgba) {
  return ((rgba >> 24) * 54 + ((rgba >> 16) & 0xff) * 183 + ((rgba >> 8) & 0xff) * 19) >> 8;
}

static __attribute__((noinline)) u32 decode_row(const struct frame *frame, int y) {
  u32 sum = 0;
  for (int x = 0; x < frame->width; ++x) {
    sum += luminance(read_pixel(frame, x, y));
  }
  return sum;
}

static __attribute__((noinline)) u32 decode_frame(const struct frame *frame) {
  u32 total = 0;
  for (int y = 0; y < frame->height; ++y) {
    total ^= decode_row(frame, y) + (u32)y;
  }
  return total;
}

// JNIEnv and jobject stay opaque: the bridge only forwards the native frame handle.
__attribute__((visibility("default"))) u32
Java_com_example_demo_NativeBridge_renderFrame(void *env, void *thiz, long handle) {
  const struct frame *frame = (const struct frame *)handle;
  u32 checksum = decode_frame(frame);
  return checksum | 1;
}
EOF
  (cd "$dir/src" && clang-19 --target=aarch64-linux-android24 -g -O2 -fPIC -ffreestanding -nostdlibinc \
    -fvisibility=hidden -fdebug-prefix-map="$dir/src=/home/dev/DemoApp/app/src/main/cpp" -c image_decoder.c \
    -o "$dir/image_decoder.o")
  clang-19 --target=aarch64-linux-android24 -shared -nostdlib -fuse-ld=lld -Wl,--build-id -Wl,-soname,libdemo.so \
    "$dir/image_decoder.o" -o "$dir/libdemo.so"
  mkdir -p "$samples/android"
  cp "$dir/libdemo.so" "$samples/android/libdemo.so"

  local lib=$dir/libdemo.so build_id
  build_id=$(llvm-readelf-19 -n "$lib" | awk '/Build ID:/ { print $3 }' | sed -n 1p)
  # The crash: a frame with NULL pixels; read_pixel() (inlined into decode_row) loads the first byte.
  local crash_pc row_ret jni_ret jni_start
  crash_pc=$(first_in_inlined "$lib" "$lib" decode_row '^ld(u)?rb$' read_pixel)
  row_ret=$(return_address "$lib" decode_frame)
  jni_ret=$(return_address "$lib" Java_com_example_demo_NativeBridge_renderFrame)
  jni_start=0x$(llvm-nm-19 "$lib" | awk '$3 == "Java_com_example_demo_NativeBridge_renderFrame" { print $1 }')
  # The SDK's own unwinder prints "pc <file address> <lib> [<abi>::<build id>]"; the frame it
  # took from the tombstone (debuggerd) keeps the tombstone's form.
  {
    printf 'pc 0x%016x libdemo.so [arm64-v8a::%s]\n' "$crash_pc" "$build_id"
    printf 'pc 0x%016x libdemo.so [arm64-v8a::%s]\n' "$row_ret" "$build_id"
    printf '#02 pc %016x  /data/app/~~Xq3VvGH1a2TzPm9kLb8==/com.example.demo-Jf7uT0qG5cV2bN4wYp1k==/lib/arm64/libdemo.so (Java_com_example_demo_NativeBridge_renderFrame+%d) (BuildId: %s)\n' \
      "$jni_ret" $((jni_ret - jni_start)) "$build_id"
  } >"$facts/android-native.stack"
  echo "Android native: libdemo.so build id $build_id, $(stat -c %s "$lib") bytes"
  local address is_return=0
  for address in "$crash_pc" "$row_ret" "$jni_ret"; do
    echo "    $address$([[ $is_return == 1 ]] && echo ' (return address)')"
    explain "$lib" "$address" "$is_return"
    is_return=1
  done
}

# --- Android Java: ProGuard-obfuscated app, run for real -------------------------------------------
android_java() {
  local dir=$work/java
  mkdir -p "$dir/framework/android/os" "$dir/framework/android/view" "$dir/framework/android/app" \
    "$dir/src/com/example/demo"
  # Stand-ins for the Android framework classes on the main thread's path (a library jar, not
  # obfuscated, as android.jar is not), so the stacks read like a device's.
  cat >"$dir/framework/android/os/Looper.java" <<'EOF'
package android.os;

import java.util.concurrent.LinkedBlockingQueue;

// Stand-in for Android's main looper (the demo runs on a JVM).
public final class Looper {
  private static final Looper MAIN = new Looper();
  final LinkedBlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();

  public static Looper getMainLooper() {
    return MAIN;
  }

  public static void loop() {
    Handler handler = new Handler();
    while (true) {
      Runnable next;
      try {
        next = MAIN.queue.take();
      } catch (InterruptedException e) {
        return;
      }
      handler.dispatchMessage(next);
    }
  }
}
EOF
  cat >"$dir/framework/android/os/Handler.java" <<'EOF'
package android.os;

public class Handler {
  public final boolean post(Runnable callback) {
    return Looper.getMainLooper().queue.offer(callback);
  }

  public void dispatchMessage(Runnable callback) {
    handleCallback(callback);
  }

  private static void handleCallback(Runnable callback) {
    callback.run();
  }
}
EOF
  cat >"$dir/framework/android/view/View.java" <<'EOF'
package android.view;

import android.os.Handler;

public class View {
  public interface OnClickListener {
    void onClick(View view);
  }

  private OnClickListener listener;

  public void setOnClickListener(OnClickListener listener) {
    this.listener = listener;
  }

  public boolean performClick() {
    if (listener == null) return false;
    listener.onClick(this);
    return true;
  }

  // A tap arrives as a message on the main thread.
  public void simulateTap() {
    new Handler().post(new PerformClick());
  }

  private final class PerformClick implements Runnable {
    @Override
    public void run() {
      performClick();
    }
  }
}
EOF
  cat >"$dir/framework/android/app/Application.java" <<'EOF'
package android.app;

public class Application {
  public void onCreate() {}
}
EOF
  cat >"$dir/framework/android/app/ActivityThread.java" <<'EOF'
package android.app;

import android.os.Looper;

// Stand-in for the process entry point: creates the Application named in the manifest, then
// runs the main looper. Usage: ActivityThread <application class> [scenario]
public final class ActivityThread {
  public static String scenario = "";

  public static void main(String[] args) throws Exception {
    scenario = args.length > 1 ? args[1] : "";
    Thread.currentThread().setName("main");
    Application app = (Application) Class.forName(args[0]).getDeclaredConstructor().newInstance();
    app.onCreate();
    Looper.loop();
  }
}
EOF
  local app=$dir/src/com/example/demo
  cat >"$app/DemoApplication.java" <<'EOF'
package com.example.demo;

import android.app.ActivityThread;
import android.app.Application;
import android.os.Handler;
import android.view.View;

// The demo app, one scenario per run (ActivityThread's second argument):
//   crash  tapping "pay" crashes; the crash SDK's uncaught-exception handler prints the trace
//   anr    the main thread blocks behind a lock the sync worker holds; the ANR watchdog prints
//          both threads' stacks
//   lag    the main thread ranks the feed for too long; the lag monitor prints three samples
public class DemoApplication extends Application {
  @Override
  public void onCreate() {
    final Thread main = Thread.currentThread();
    switch (ActivityThread.scenario) {
      case "anr": {
        AnrWatchdog.start(main, 400);
        SyncWorker worker = new SyncWorker(ImageCache.shared());
        worker.start();
        new Handler().post(new FeedActivity(ImageCache.shared()));
        break;
      }
      case "lag":
        MainThreadSampler.start(main, 300, 100, 3);
        new Handler().post(new FeedRanker("tea kettle deals"));
        break;
      default: {
        Thread.setDefaultUncaughtExceptionHandler(new CrashReporter());
        View pay = new View();
        pay.setOnClickListener(new CheckoutActivity(new CartRepository()));
        pay.simulateTap();
      }
    }
  }
}
EOF
  cat >"$app/CrashReporter.java" <<'EOF'
package com.example.demo;

// The crash SDK's uncaught-exception handler: sends Throwable.printStackTrace() text.
class CrashReporter implements Thread.UncaughtExceptionHandler {
  @Override
  public void uncaughtException(Thread thread, Throwable error) {
    System.out.println("=== crash " + thread.getName() + " " + error.getClass().getName() + ": " + error.getMessage());
    error.printStackTrace(System.out);
    System.exit(0);
  }
}
EOF
  cat >"$app/CheckoutActivity.java" <<'EOF'
package com.example.demo;

import android.view.View;

class CheckoutActivity implements View.OnClickListener {
  private final CartRepository repository;
  private long lastTotal;

  CheckoutActivity(CartRepository repository) {
    this.repository = repository;
  }

  @Override
  public void onClick(View view) {
    Cart cart = loadCart(new String[] {"A-100:2:4.99", "B-7:1:12,50"});
    lastTotal = cart.totalCents();
    System.out.println("paying " + lastTotal);
  }

  private Cart loadCart(String[] lines) {
    try {
      return repository.load(lines);
    } catch (NumberFormatException e) {
      throw new CheckoutException("could not load the cart", e);
    }
  }
}
EOF
  cat >"$app/CheckoutException.java" <<'EOF'
package com.example.demo;

class CheckoutException extends RuntimeException {
  CheckoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
EOF
  cat >"$app/Cart.java" <<'EOF'
package com.example.demo;

import java.util.ArrayList;
import java.util.List;

class Cart {
  final List<long[]> lines = new ArrayList<>();

  void add(long priceCents, int quantity) {
    lines.add(new long[] {priceCents, quantity});
  }

  long totalCents() {
    long total = 0;
    for (long[] line : lines) total += line[0] * line[1];
    return total;
  }
}
EOF
  cat >"$app/CartRepository.java" <<'EOF'
package com.example.demo;

class CartRepository {
  Cart load(String[] lines) {
    Cart cart = new Cart();
    for (String line : lines) {
      String[] fields = line.split(":");
      cart.add(PriceParser.parseCents(fields[2]), Integer.parseInt(fields[1]));
    }
    return cart;
  }
}
EOF
  cat >"$app/PriceParser.java" <<'EOF'
package com.example.demo;

final class PriceParser {
  private PriceParser() {}

  static long parseCents(String price) {
    int dot = price.indexOf('.');
    if (dot < 0) return wholeUnits(price) * 100;
    return wholeUnits(price.substring(0, dot)) * 100 + Integer.parseInt(price.substring(dot + 1));
  }

  private static long wholeUnits(String text) {
    return Integer.parseInt(text.trim());
  }
}
EOF
  cat >"$app/ImageCache.java" <<'EOF'
package com.example.demo;

import java.util.HashMap;
import java.util.Map;

class ImageCache {
  private static final ImageCache SHARED = new ImageCache();
  private final Map<String, byte[]> entries = new HashMap<>();

  static ImageCache shared() {
    return SHARED;
  }

  synchronized byte[] get(String url) {
    return entries.get(url);
  }

  synchronized void flushToDisk() throws InterruptedException {
    for (int i = 0; i < 50; ++i) {
      writeEntry(i);
    }
  }

  private void writeEntry(int index) throws InterruptedException {
    Thread.sleep(100);  // a slow disk write, under the cache lock
  }
}
EOF
  cat >"$app/SyncWorker.java" <<'EOF'
package com.example.demo;

class SyncWorker extends Thread {
  private final ImageCache cache;

  SyncWorker(ImageCache cache) {
    super("SyncWorker");
    this.cache = cache;
    setDaemon(true);
  }

  @Override
  public void run() {
    try {
      cache.flushToDisk();
    } catch (InterruptedException e) {
      return;
    }
  }
}
EOF
  cat >"$app/FeedActivity.java" <<'EOF'
package com.example.demo;

import java.util.ArrayList;
import java.util.List;

class FeedActivity implements Runnable {
  private final ImageCache cache;
  private final List<byte[]> thumbnails = new ArrayList<>();

  FeedActivity(ImageCache cache) {
    this.cache = cache;
  }

  @Override
  public void run() {
    onResume();
  }

  private void onResume() {
    try {
      Thread.sleep(50);  // inflate the layout; meanwhile the sync worker takes the cache lock
    } catch (InterruptedException e) {
      return;
    }
    bindThumbnails(new String[] {"https://img.example.com/1.jpg", "https://img.example.com/2.jpg"});
  }

  private void bindThumbnails(String[] urls) {
    for (String url : urls) {
      thumbnails.add(cache.get(url));
    }
  }
}
EOF
  cat >"$app/FeedRanker.java" <<'EOF'
package com.example.demo;

// Ranks feed items on the main thread: slow enough to make the UI stutter.
class FeedRanker implements Runnable {
  private final String query;

  FeedRanker(String query) {
    this.query = query;
  }

  @Override
  public void run() {
    String[] titles = new String[3000];
    for (int i = 0; i < titles.length; ++i) {
      titles[i] = (i % 7 == 0 ? "Tea kettle deals " : "Weekend offers on mugs ") + i;
    }
    while (true) rank(titles);
  }

  String[] rank(String[] titles) {
    String[] ranked = titles.clone();
    int[] scores = new int[ranked.length];
    for (int i = 0; i < ranked.length; ++i) scores[i] = score(ranked[i]);
    sortByScore(ranked, scores);
    return ranked;
  }

  private int score(String title) {
    return similarity(query.toLowerCase(), title.toLowerCase());
  }

  private static int similarity(String a, String b) {
    int[][] table = new int[a.length() + 1][b.length() + 1];
    for (int i = 1; i <= a.length(); ++i) {
      for (int j = 1; j <= b.length(); ++j) {
        table[i][j] = a.charAt(i - 1) == b.charAt(j - 1) ? table[i - 1][j - 1] + 1
            : Math.max(table[i - 1][j], table[i][j - 1]);
      }
    }
    return table[a.length()][b.length()];
  }

  private static void sortByScore(String[] items, int[] scores) {
    for (int i = 1; i < items.length; ++i) {
      for (int j = i; j > 0 && scores[j - 1] < scores[j]; --j) {
        int score = scores[j];
        scores[j] = scores[j - 1];
        scores[j - 1] = score;
        String item = items[j];
        items[j] = items[j - 1];
        items[j - 1] = item;
      }
    }
  }
}
EOF
  cat >"$app/AnrWatchdog.java" <<'EOF'
package com.example.demo;

import java.util.Map;

// What an ANR SDK does: a watchdog thread notices the main thread has not made progress for
// `timeoutMs` and captures the stacks of the main thread and of the thread holding it up.
final class AnrWatchdog {
  private AnrWatchdog() {}

  static void start(Thread main, long timeoutMs) {
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(timeoutMs);
      } catch (InterruptedException e) {
        return;
      }
      Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
      for (Thread thread : all.keySet()) {
        if (thread == main) printThread(thread, all.get(thread));
      }
      for (Thread thread : all.keySet()) {
        if (thread.getName().equals("SyncWorker")) printThread(thread, all.get(thread));
      }
      System.exit(0);
    }, "AnrWatchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }

  private static void printThread(Thread thread, StackTraceElement[] frames) {
    System.out.println("=== thread " + thread.getName() + " " + thread.getState());
    print(frames);
  }

  // Frames as Android prints them: "\tat class.method(File:line)".
  static void print(StackTraceElement[] frames) {
    for (StackTraceElement frame : frames) {
      String location = frame.isNativeMethod() ? "Native Method"
          : frame.getFileName() == null ? "Unknown Source"
          : frame.getLineNumber() >= 0 ? frame.getFileName() + ":" + frame.getLineNumber() : frame.getFileName();
      System.out.println("\tat " + frame.getClassName() + "." + frame.getMethodName() + "(" + location + ")");
    }
  }
}
EOF
  cat >"$app/MainThreadSampler.java" <<'EOF'
package com.example.demo;

// What a lag (jank) SDK does: while the main thread is busy, sample its stack every
// `intervalMs` and report the samples.
final class MainThreadSampler {
  private MainThreadSampler() {}

  static void start(Thread main, long delayMs, long intervalMs, int count) {
    Thread sampler = new Thread(() -> {
      try {
        Thread.sleep(delayMs);
        for (int i = 0; i < count; ++i) {
          System.out.println("=== sample " + (delayMs + i * intervalMs));
          AnrWatchdog.print(main.getStackTrace());
          Thread.sleep(intervalMs);
        }
      } catch (InterruptedException e) {
        return;
      }
      System.exit(0);
    }, "MainThreadSampler");
    sampler.setDaemon(true);
    sampler.start();
  }
}
EOF
  mkdir -p "$dir/framework-classes" "$dir/classes"
  javac -g -d "$dir/framework-classes" $(find "$dir/framework" -name '*.java')
  jar cf "$dir/android.jar" -C "$dir/framework-classes" .
  javac -g -cp "$dir/android.jar" -d "$dir/classes" $(find "$dir/src" -name '*.java')
  jar cf "$dir/in.jar" -C "$dir/classes" .
  # As an Android release build: everything renamed and optimized (inlining included) except
  # what the manifest names; line numbers kept, source file names hidden.
  cat >"$dir/proguard.pro" <<EOF
-injars $dir/in.jar
-outjars $dir/out.jar
-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)
-libraryjars $dir/android.jar
-keep public class com.example.demo.DemoApplication { public <init>(); }
-keepattributes SourceFile,LineNumberTable
-renamesourcefileattribute SourceFile
-optimizationpasses 5
-allowaccessmodification
-printmapping $dir/mapping.txt
-dontwarn
EOF
  java -cp "$proguard_lib/*" proguard.ProGuard @"$dir/proguard.pro" >"$dir/proguard.log"
  mkdir -p "$samples/android"
  cp "$dir/mapping.txt" "$samples/android/mapping.txt"
  local scenario
  for scenario in crash anr lag; do
    timeout 60 java -cp "$dir/out.jar:$dir/android.jar" android.app.ActivityThread com.example.demo.DemoApplication \
      "$scenario" >"$facts/java-$scenario.out"
  done
  # On a device the JDK's frames carry no module prefix ("java.base/"): drop it.
  sed -i 's#^\(\s*at \)java\.base/#\1#' "$facts/java-crash.out"
  echo "Android Java: mapping.txt $(stat -c %s "$dir/mapping.txt") bytes; obfuscated traces:"
  sed 's/^/    /' "$facts/java-crash.out" "$facts/java-anr.out" "$facts/java-lag.out"
}

# --- Web H5: esbuild-minified bundle, run in node under its CDN URL --------------------------------
web() {
  local dir=$work/web
  mkdir -p "$dir/src/cart" "$dir/src/format"
  cat >"$dir/src/index.js" <<'EOF'
// Web storefront entry: renders the cart and reports uncaught errors the way a browser SDK does.
import { renderCart } from "./cart/CartView.js";
import { reportError } from "./telemetry.js";

const order = {
  id: "A-1042",
  lines: [
    { sku: "tea", quantity: 2, price: { amount: 499, currency: "EUR" } },
    { sku: "mug", quantity: 1 },
  ],
};

try {
  document.body.innerHTML = renderCart(order);
} catch (error) {
  reportError(error);
}
EOF
  cat >"$dir/src/cart/CartView.js" <<'EOF'
import { formatMoney } from "../format/money.js";

function renderLine(line) {
  const total = formatMoney(line.price, line.quantity);
  return `<li>${line.sku} × ${line.quantity}: ${total}</li>`;
}

export function renderCart(order) {
  const rows = order.lines.map((line) => renderLine(line));
  return `<ul id="order-${order.id}">${rows.join("")}</ul>`;
}
EOF
  cat >"$dir/src/format/money.js" <<'EOF'
const symbols = { EUR: "€", USD: "$" };

export function formatMoney(price, quantity) {
  const cents = price.amount * quantity;
  const symbol = symbols[price.currency] || price.currency;
  return `${symbol}${(cents / 100).toFixed(2)}`;
}
EOF
  cat >"$dir/src/telemetry.js" <<'EOF'
// The browser SDK's error hook: sends the error's type, message and raw stack.
export function reportError(error) {
  const payload = { type: error.name, message: error.message, stack: error.stack };
  (globalThis.__demoTransport || console.log)(JSON.stringify(payload));
}
EOF
  local bundle=$dir/dist/main.3f9a1c2b.js
  "$node_modules/.bin/esbuild" "$dir/src/index.js" --bundle --minify --sourcemap --format=iife \
    --platform=browser --target=es2020 --log-level=error --outfile="$bundle"
  mkdir -p "$samples/web"
  cp "$bundle.map" "$samples/web/main.3f9a1c2b.js.map"
  # Run the minified bundle as a browser would load it: a classic script whose name is its URL.
  node - "$bundle" >"$facts/web.json" <<'EOF'
const fs = require("fs");
const vm = require("vm");
const url = "https://cdn.example.com/static/js/main.3f9a1c2b.js";
let report = null;
globalThis.document = { body: {} };
globalThis.__demoTransport = (json) => { report = JSON.parse(json); };
new vm.Script(fs.readFileSync(process.argv[2], "utf8"), { filename: url }).runInThisContext();
// Keep the frames up to the bundle's last one (what follows is node's loader, not a browser's).
const lines = report.stack.split("\n").slice(1);
let last = 0;
lines.forEach((line, i) => { if (line.includes(url)) last = i; });
report.stack = lines.slice(0, last + 1).join("\n");
// Firefox names the minified variable in its message ("t is undefined").
const code = fs.readFileSync(process.argv[2], "utf8");
report.firefox_message = `can't access property "amount", ${/([A-Za-z_$][\w$]*)\.amount/.exec(code)[1]} is undefined`;
process.stdout.write(JSON.stringify(report));
EOF
  echo "Web: main.3f9a1c2b.js $(stat -c %s "$bundle") bytes, map $(stat -c %s "$bundle.map") bytes; V8 stack:"
  node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).stack)' "$facts/web.json" | sed 's/^/    /'
}

# --- React Native: Hermes bytecode + composed map, run in the hermes VM ----------------------------
react_native() {
  local dir=$work/rn
  mkdir -p "$dir/src/screens" "$dir/src/api" "$dir/build"
  cat >"$dir/src/index.js" <<'EOF'
// React Native app entry (plain ES5: the pinned Hermes VM predates classes and async).
var ProfileScreen = require("./screens/ProfileScreen");
var ErrorUtils = require("./ErrorUtils");

ErrorUtils.guard(function () {
  ProfileScreen.render({ userId: 42, session: null });
});
EOF
  cat >"$dir/src/screens/ProfileScreen.js" <<'EOF'
var api = require("../api/profile");

function greeting(profile) {
  return "Hello, " + profile.displayName;
}

function render(props) {
  var profile = api.loadProfile(props.userId, props.session);
  return { title: greeting(profile), avatar: profile.avatarUrl };
}

module.exports = { render: render };
EOF
  cat >"$dir/src/api/profile.js" <<'EOF'
var cache = {};

function authHeader(session) {
  return "Bearer " + session.token;
}

function loadProfile(userId, session) {
  if (cache[userId]) return cache[userId];
  var request = { url: "/users/" + userId, headers: { Authorization: authHeader(session) } };
  cache[userId] = { displayName: "user " + userId, request: request };
  return cache[userId];
}

module.exports = { loadProfile: loadProfile };
EOF
  cat >"$dir/src/ErrorUtils.js" <<'EOF'
// Stand-in for React Native's global error handler: hands the JS error to the crash SDK,
// which sends the raw stack ("print" is the hermes shell's output function).
function guard(fn) {
  try {
    fn();
  } catch (error) {
    print(JSON.stringify({ type: error.name, message: error.message, stack: error.stack }));
  }
}

module.exports = { guard: guard };
EOF
  # The packager's step (esbuild standing in for Metro: a plain JS bundle + map; release builds
  # with Hermes are not minified by Metro), then hermesc (bytecode + map), then the two maps
  # composed as React Native's build does. ESM output keeps the entry's code at top level (an
  # IIFE wrapper would put the "global" frame in code no map covers).
  (cd "$dir" && "$node_modules/.bin/esbuild" src/index.js --bundle --format=esm --sourcemap --log-level=error \
    --outfile=build/index.android.bundle.js)
  (cd "$dir/build" && "$hermes_bin/hermesc" -emit-binary -O -output-source-map -out=index.android.bundle \
    index.android.bundle.js)
  mkdir -p "$samples/react-native"
  node - "$node_modules" "$dir/build" "$samples/react-native/index.android.bundle.map" <<'EOF'
const fs = require("fs");
const path = require("path");
const [nodeModules, build, out] = process.argv.slice(2);
const metroSourceMap = require(path.join(nodeModules, "metro-source-map"));
const babelParser = require(path.join(nodeModules, "@babel", "parser"));
const packagerMap = JSON.parse(fs.readFileSync(path.join(build, "index.android.bundle.js.map"), "utf8"));
// Metro's function maps (x_facebook_sources), one per source.
packagerMap.x_facebook_sources = packagerMap.sourcesContent.map((content) =>
  [metroSourceMap.generateFunctionMap(babelParser.parse(content, { sourceType: "unambiguous" }))]);
const composed = metroSourceMap.composeSourceMaps([
  packagerMap, JSON.parse(fs.readFileSync(path.join(build, "index.android.bundle.map"), "utf8"))]);
composed.file = "index.android.bundle";
fs.writeFileSync(out, JSON.stringify(composed));
EOF
  # The pinned hermes shell crashes while tearing down after a successful run; its output is
  # complete by then.
  (cd "$dir/build" && bash -c '"$0" -b index.android.bundle >hermes.out 2>&1; exit 0' "$hermes_bin/hermes" 2>/dev/null)
  grep -m1 '^{' "$dir/build/hermes.out" >"$facts/react-native.json" ||
    { echo "make-demo-samples.sh: hermes printed no stack:" >&2; cat "$dir/build/hermes.out" >&2; exit 1; }
  echo "React Native: index.android.bundle $(stat -c %s "$dir/build/index.android.bundle") bytes of bytecode; Hermes stack:"
  node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).stack)' "$facts/react-native.json" |
    sed 's/^/    /'
}

# --- manifest.json and events.jsonl -----------------------------------------------------------------
assemble() {
  node - "$facts" "$samples" <<'EOF'
const fs = require("fs");
const path = require("path");
const [facts, samples] = process.argv.slice(2);
const read = (name) => fs.readFileSync(path.join(facts, name), "utf8");
const app = "demo", build_id = "1.0.0(100)";

const manifest = { uploads: [
  { file: "ios/DemoApp.app.dSYM.zip", kind: "dsym", app, build_id },
  { file: "android/libdemo.so", kind: "elf", app, build_id },
  { file: "android/mapping.txt", kind: "proguard", app, build_id },
  { file: "web/main.3f9a1c2b.js.map", kind: "sourcemap", app, build_id, name: "main.3f9a1c2b.js" },
  { file: "react-native/index.android.bundle.map", kind: "sourcemap", app, build_id, name: "index.android.bundle" },
] };
fs.writeFileSync(path.join(samples, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");

// "=== <header>" sections of a Java run.
function sections(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("=== ")) out.push({ header: line.slice(4), lines: [] });
    else if (line !== "" && out.length) out[out.length - 1].lines.push(line);
  }
  return out;
}

const events = [];
let clock = 1700000000000;
const event = (fields) => {
  clock += 60000;
  events.push({ event_id: fields.event_id, kind: fields.kind, platform: fields.platform, app, build_id,
    timestamp_ms: clock, ...fields });
};

event({ event_id: "demo-ios-crash", kind: "crash", platform: "ios",
  exception: { type: "EXC_BAD_ACCESS", message: "SIGSEGV: KERN_INVALID_ADDRESS at 0x0000000000000008" },
  threads: [{ name: "main", crashed: true, stack: read("ios.stack").trimEnd() }],
  attributes: { os: "iOS 17.1", device: "iPhone14,2" } });

event({ event_id: "demo-android-native-crash", kind: "crash", platform: "android",
  exception: { type: "SIGSEGV", message: "SEGV_MAPERR, fault addr 0x0" },
  threads: [{ name: "RenderThread", crashed: true, stack: read("android-native.stack").trimEnd() }],
  attributes: { os: "Android 14", device: "Pixel 7", abi: "arm64-v8a" } });

const crash = sections(read("java-crash.out"))[0];
const [, crashThread, crashType, crashMessage] = /^crash (\S+) ([^:]+): (.*)$/.exec(crash.header);
event({ event_id: "demo-android-java-crash", kind: "crash", platform: "android",
  exception: { type: crashType, message: crashMessage },
  threads: [{ name: crashThread, crashed: true, stack: crash.lines.join("\n") }],
  attributes: { os: "Android 14", device: "Pixel 7" } });

const anr = sections(read("java-anr.out"));
event({ event_id: "demo-android-anr", kind: "anr", platform: "android",
  exception: { type: "ANR", message: "Input dispatching timed out: main thread blocked for 5000 ms" },
  threads: anr.map((section) => {
    const [, name, state] = /^thread (\S+) (\S+)$/.exec(section.header);
    return { name, crashed: name === "main", state, stack: section.lines.join("\n") };
  }),
  attributes: { os: "Android 14", device: "Pixel 7" } });

const lagStart = clock + 60000;
event({ event_id: "demo-android-lag", kind: "lag", platform: "android",
  exception: { type: "Lag", message: "main thread busy for 600 ms in one message" },
  threads: [{ name: "main", samples: sections(read("java-lag.out")).map((section) => ({
    timestamp_ms: lagStart + Number(/^sample (\d+)$/.exec(section.header)[1]),
    stack: section.lines.join("\n") })) }],
  attributes: { os: "Android 14", device: "Pixel 7", duration_ms: 600 } });

const web = JSON.parse(read("web.json"));
const firefoxMessage = web.firefox_message;
delete web.firefox_message;
event({ event_id: "demo-web-error", kind: "error", platform: "web",
  exception: { type: web.type, message: web.message },
  threads: [{ name: "main", crashed: true, stack: web.stack }],
  attributes: { browser: "Chrome 126", url: "https://shop.example.com/cart" } });

// The same error as Firefox reports it: "function@url:line:column", no frames for built-ins.
// (No Firefox here: written from the V8 frames' positions, which both engines report 1-based.)
const firefox = web.stack.split("\n").flatMap((line) => {
  const match = /^\s*at (?:(.*?) \()?(https:[^ )]*:\d+:\d+)\)?$/.exec(line);
  if (!match) return [];
  const name = (match[1] || "").replace(/^Object\./, "").replace(/^<anonymous>$/, "");
  return [name + "@" + match[2]];
});
event({ event_id: "demo-web-error-firefox", kind: "error", platform: "web",
  exception: { type: "TypeError", message: firefoxMessage },
  threads: [{ name: "main", crashed: true, stack: firefox.join("\n") }],
  attributes: { browser: "Firefox 128", url: "https://shop.example.com/cart" } });

const rn = JSON.parse(read("react-native.json"));
event({ event_id: "demo-react-native-crash", kind: "crash", platform: "react_native",
  exception: { type: rn.type, message: rn.message },
  threads: [{ name: "mqt_js", crashed: true, stack: rn.stack.split("\n").slice(1).join("\n") }],
  attributes: { os: "Android 14", device: "Pixel 7", engine: "hermes" } });

const lines = events.map((e) => JSON.stringify(e));
// An event that cannot be read: the demo shows it going to the dead-letter topic.
lines.push(JSON.stringify({ event_id: "demo-bad-1", kind: "crash", platform: "ios", app, threads: "not an array" }));
fs.writeFileSync(path.join(samples, "events.jsonl"), lines.join("\n") + "\n");
EOF
}

# Replace everything but the README.
find "$samples" -mindepth 1 ! -name README.md -delete
ios
android_native
android_java
web
react_native
assemble
echo
echo "wrote $samples:"
(cd "$samples" && find . -type f ! -name README.md | sort | xargs ls -l | awk '{ printf "  %8d  %s\n", $5, $9 }')
echo "  total $(du -cb $(find "$samples" -type f ! -name README.md) | tail -1 | cut -f1) bytes"
