// Line-format detection for the five stack kinds and their common variants.
#include <gtest/gtest.h>

#include <random>

#include "formats/stack/java_line.h"
#include "formats/stack/js_line.h"
#include "formats/stack/native_line.h"

namespace restack::stack {
namespace {

TEST(StackLine, IosSdkFrame) {
  StackLine line =
      parseStackLine("MDAP_testDemo9  0x00000001079b59d3 0x1079b3000 + 10707 [8c17697f-2e84-39e5-b491-fcf5169106ff]");
  ASSERT_EQ(line.kindName(), "native");
  const NativeFrameLine* frame = asNative(line);
  EXPECT_EQ(frame->module, "MDAP_testDemo9");
  EXPECT_EQ(frame->address, 10707u);
  EXPECT_EQ(frame->runtime_address, 0x1079b59d3u);
  EXPECT_EQ(frame->load_address, 0x1079b3000u);
  EXPECT_EQ(frame->debug_id, "8c17697f2e8439e5b491fcf5169106ff");
  EXPECT_FALSE(frame->frame_index.has_value());
}

TEST(StackLine, AppleCrashReportFrameWithSpacesInImageName) {
  StackLine line = parseStackLine("3   Google Maps   0x0000000104a1c3e4 0x104a14000 + 33764");
  ASSERT_EQ(line.kindName(), "native");
  EXPECT_EQ(asNative(line)->frame_index, 3u);
  EXPECT_EQ(asNative(line)->module, "Google Maps");
  EXPECT_EQ(asNative(line)->address, 33764u);
  EXPECT_TRUE(asNative(line)->debug_id.empty());
  EXPECT_TRUE(asNative(line)->symbol_hint.empty());

  // An Apple report's frame the device symbolicated, as formats/crash_report rewrites it: the
  // symbol follows the offset and the image's id.
  StackLine symbolized = parseStackLine(
      "libsystem_kernel.dylib 0x00000001e1a2b1b0 0x1e1a25000 + 25008 [11111111-2222-3333-4444-555555555555] "
      "__pthread_kill + 8");
  ASSERT_EQ(symbolized.kindName(), "native");
  EXPECT_EQ(asNative(symbolized)->address, 25008u);
  EXPECT_EQ(asNative(symbolized)->debug_id, "11111111222233334444555555555555");
  EXPECT_EQ(asNative(symbolized)->symbol_hint, "__pthread_kill + 8");
  // Apple's other unsymbolicated form: the image named again, then the offset from its start.
  StackLine image_plus =
      parseStackLine("3   My App   0x0000000104a1c3e4 My App + 33764 [4c4c44be-5555-3144-a18f-b1819e548735]");
  ASSERT_EQ(image_plus.kindName(), "native");
  EXPECT_EQ(asNative(image_plus)->frame_index, 3u);
  EXPECT_EQ(asNative(image_plus)->module, "My App");
  EXPECT_EQ(asNative(image_plus)->address, 33764u);
  EXPECT_EQ(asNative(image_plus)->load_address, 0x104a14000u);
  EXPECT_EQ(asNative(image_plus)->debug_id, "4c4c44be55553144a18fb1819e548735");
  EXPECT_TRUE(asNative(image_plus)->symbol_hint.empty());
  for (const char* other : {"MyApp 0x10 MyApp + 33764", "MyApp 0x0000000104a1c3e4 MyApp + 12 trailing words",
                            "MyApp 0x0 main + 12", "MyApp 0x104a1c3e4 + 12", "0x0000000104a1c3e4 main + 12"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }
  // A line the device symbolicated, sent without the report's binary images: the runtime address
  // and the device's symbol, but no load address and no offset in the image.
  StackLine device = parseStackLine("2   UIKitCore   0x00000001a2b3c4d5 -[UIApplication _run] + 888");
  ASSERT_EQ(device.kindName(), "native");
  EXPECT_EQ(asNative(device)->frame_index, 2u);
  EXPECT_EQ(asNative(device)->module, "UIKitCore");
  EXPECT_EQ(asNative(device)->runtime_address, 0x1a2b3c4d5u);
  EXPECT_TRUE(asNative(device)->image_offset_unknown);
  EXPECT_EQ(asNative(device)->address, 0u);
  EXPECT_EQ(asNative(device)->load_address, 0u);
  EXPECT_EQ(asNative(device)->symbol_hint, "-[UIApplication _run] + 888");
  StackLine swift = parseStackLine("My App 0x0000000104a1c3e4 My_App.ViewController.tap(_:) + 52");
  ASSERT_EQ(swift.kindName(), "native");
  EXPECT_EQ(asNative(swift)->module, "My App");
  EXPECT_EQ(asNative(swift)->symbol_hint, "My_App.ViewController.tap(_:) + 52");
  StackLine other = parseStackLine("3 MyApp 0x0000000104a1c3e4 Other + 12");
  ASSERT_EQ(other.kindName(), "native");
  EXPECT_EQ(asNative(other)->symbol_hint, "Other + 12");
  EXPECT_TRUE(asNative(other)->image_offset_unknown);
  EXPECT_FALSE(asNative(image_plus)->image_offset_unknown);
  StackLine without_id = parseStackLine("Shop 0x0000000104a18040 0x104a14000 + 16448 -[Cart total] + 64");
  ASSERT_EQ(without_id.kindName(), "native");
  EXPECT_TRUE(asNative(without_id)->debug_id.empty());
  EXPECT_EQ(asNative(without_id)->symbol_hint, "-[Cart total] + 64");
}

TEST(StackLine, AndroidSdkNativeFrame) {
  StackLine line = parseStackLine("pc 0x0000000000010d78 libapmDemo.so [arm64-v8a::ba78e30f9664d0150fba525ab5981b19]");
  ASSERT_EQ(line.kindName(), "native");
  EXPECT_EQ(asNative(line)->address, 0x10d78u);
  EXPECT_EQ(asNative(line)->module, "libapmDemo.so");
  EXPECT_EQ(asNative(line)->abi, "arm64-v8a");
  EXPECT_EQ(asNative(line)->debug_id, "ba78e30f9664d0150fba525ab5981b19");
  EXPECT_FALSE(asNative(line)->call_site_pc);  // the SDK form prints return addresses
}

TEST(StackLine, TombstoneFrames) {
  StackLine line = parseStackLine(
      "    #00 pc 000000000004a6c8  /system/lib64/libc.so (abort+164) (BuildId: "
      "1f2e3d4c5b6a79881f2e3d4c5b6a7988aabbccdd)");
  ASSERT_EQ(line.kindName(), "native");
  EXPECT_EQ(line.indent, "    ");
  EXPECT_EQ(asNative(line)->frame_index, 0u);
  EXPECT_EQ(asNative(line)->address, 0x4a6c8u);
  EXPECT_EQ(asNative(line)->module, "libc.so");
  EXPECT_EQ(asNative(line)->module_path, "/system/lib64/libc.so");
  EXPECT_EQ(asNative(line)->symbol_hint, "abort+164");
  EXPECT_EQ(asNative(line)->debug_id, "1f2e3d4c5b6a79881f2e3d4c5b6a7988aabbccdd");

  StackLine apk = parseStackLine(
      "#01 pc 0000000000011b74  /data/app/~~x==/com.app-y==/base.apk!libfoo.so (offset 0x1000) (Java_foo(int)+20)");
  ASSERT_EQ(apk.kindName(), "native");
  EXPECT_EQ(asNative(apk)->frame_index, 1u);
  EXPECT_EQ(asNative(apk)->symbol_hint, "Java_foo(int)+20");
  EXPECT_TRUE(asNative(apk)->debug_id.empty());
  // The image is the APK's entry: the name its symbols were uploaded under.
  EXPECT_EQ(asNative(apk)->module, "libfoo.so");
  EXPECT_EQ(asNative(apk)->module_path, "/data/app/~~x==/com.app-y==/base.apk!libfoo.so");
  // libunwindstack prints caller frames at their call instruction already.
  EXPECT_TRUE(asNative(apk)->call_site_pc);
  EXPECT_FALSE(asNative(parseStackLine("#01 pc 0x0000000000011b74 libfoo.so [arm64-v8a::ba78e30f]"))->call_site_pc);
}

// Android ANR dumps (ART) and jstack print notes about the thread among its frames; ART prints
// the thread's native frames with a "native: " prefix.
TEST(StackLine, ThreadDumpNotesAndAnrNativeFrames) {
  for (const char* note :
       {"\"main\" prio=5 tid=1 Native", "\"main\" tid=1 Blocked", "\"Signal Catcher\" daemon prio=10 tid=6 Runnable",
        "\"main\" #1 prio=5 os_prio=0 cpu=120.53ms tid=0x00007f nid=0x1a2b waiting on condition",
        "  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x72d6f8b8",
        "  | held mutexes=", "  - waiting on <0x0c2d3e4f> (a java.lang.Object)", "  - locked <0x0a1b2c3d> (a a.b.c)",
        "  - waiting to lock <0x0a1b2c3d> (a a.b.c) held by thread 12", "  - sleeping on <0x01> (a java.lang.Object)",
        "\t- parking to wait for  <0x000000071a4c2b58> (a java.util.concurrent.CountDownLatch$Sync)",
        "   java.lang.Thread.State: WAITING (parking)", "  (no managed stack frames)"}) {
    StackLine line = parseStackLine(note);
    EXPECT_EQ(line.kindName(), "thread_note") << note;
    EXPECT_FALSE(line.isFrame()) << note;
  }
  for (const char* other : {"- something else", "| no properties", "\"quoted\" text", "- locked"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }
  StackLine native = parseStackLine(
      "  native: #01 pc 0000000000012d4c  /system/lib64/libutils.so (android::Looper::pollOnce(int, int*, int*, "
      "void**)+180) (BuildId: 0a1b2c3d)");
  ASSERT_EQ(native.kindName(), "native");
  EXPECT_EQ(asNative(native)->frame_index, 1u);
  EXPECT_EQ(asNative(native)->address, 0x12d4cu);
  EXPECT_EQ(asNative(native)->module, "libutils.so");
  EXPECT_EQ(asNative(native)->symbol_hint, "android::Looper::pollOnce(int, int*, int*, void**)+180");
  EXPECT_EQ(asNative(native)->debug_id, "0a1b2c3d");
}

TEST(StackLine, JavaFramesAndTraceStructure) {
  StackLine sdk = parseStackLine("tg.a.e(MethodRecorder.kt:1)");
  ASSERT_EQ(sdk.kindName(), "java_frame");
  EXPECT_EQ(asJavaFrame(sdk)->class_name, "tg.a");
  EXPECT_EQ(asJavaFrame(sdk)->method, "e");
  EXPECT_EQ(asJavaFrame(sdk)->file, "MethodRecorder.kt");
  EXPECT_EQ(asJavaFrame(sdk)->line, 1u);

  StackLine module = parseStackLine("\tat java.base/java.lang.Thread.run(Thread.java:833)");
  ASSERT_EQ(module.kindName(), "java_frame");
  EXPECT_EQ(module.indent, "\t");
  EXPECT_EQ(asJavaFrame(module)->module_prefix, "java.base/");
  EXPECT_EQ(asJavaFrame(module)->class_name, "java.lang.Thread");

  for (const char* text : {"at a.b.c(Unknown Source)", "at a.b.c(Native Method)", "at a.b$1.<init>(SourceFile)",
                           "at com.x.Y.lambda$run$0(Y.java)"}) {
    StackLine line = parseStackLine(text);
    ASSERT_EQ(line.kindName(), "java_frame") << text;
    EXPECT_FALSE(asJavaFrame(line)->line.has_value()) << text;
  }

  StackLine header = parseStackLine("Exception in thread \"main\" java.lang.IllegalStateException: bad: state");
  ASSERT_EQ(header.kindName(), "java_exception");
  EXPECT_EQ(asJavaException(header)->prefix, "Exception in thread \"main\" ");
  EXPECT_EQ(asJavaException(header)->class_name, "java.lang.IllegalStateException");
  EXPECT_EQ(asJavaException(header)->message, "bad: state");

  StackLine caused = parseStackLine("Caused by: a.b.c");
  ASSERT_EQ(caused.kindName(), "java_exception");
  EXPECT_EQ(asJavaException(caused)->class_name, "a.b.c");
  EXPECT_FALSE(asJavaException(caused)->has_message);

  // Play Console prints a space before the location; V8's "at fn (url:line:column)" has one too,
  // but always a line and a column, or words no JVM prints.
  for (const char* spaced : {"at a.b.c (SourceFile:12)", "at android.os.MessageQueue.nativePollOnce (Native method)",
                             "at com.x.Foo.bar (Foo.kt)", "at a.b.d (Unknown Source:7)"}) {
    StackLine line = parseStackLine(spaced);
    ASSERT_EQ(line.kindName(), "java_frame") << spaced;
    EXPECT_FALSE(asJavaFrame(line)->method.ends_with(" ")) << spaced;
  }
  EXPECT_EQ(asJavaFrame(parseStackLine("at a.b.c (SourceFile:12)"))->class_name, "a.b");
  EXPECT_EQ(asJavaFrame(parseStackLine("at a.b.c (SourceFile:12)"))->method, "c");
  EXPECT_EQ(asJavaFrame(parseStackLine("at a.b.c (SourceFile:12)"))->line, 12u);
  for (const char* v8 : {"at Object.foo (https://h/a.js:1:2)", "at a.b.c (a.js:3:4)", "at JSON.parse (native)",
                         "at Array.map (<anonymous>)", "at async Promise.all (index 0)"}) {
    EXPECT_EQ(parseStackLine(v8).kindName(), "js_frame") << v8;
  }
  // A location with a line and no column is neither: V8 prints both.
  EXPECT_EQ(parseStackLine("at foo (a.js:12)").kindName(), "unknown");

  // A JVM hidden class (a lambda's proxy) has its address after a '/' in its name.
  StackLine hidden = parseStackLine("\tat com.x.Main$$Lambda$14/0x0000000800c03000.run(Unknown Source)");
  ASSERT_EQ(hidden.kindName(), "java_frame");
  EXPECT_EQ(asJavaFrame(hidden)->module_prefix, "");
  EXPECT_EQ(asJavaFrame(hidden)->class_name, "com.x.Main$$Lambda$14/0x0000000800c03000");
  EXPECT_EQ(asJavaFrame(hidden)->method, "run");
  StackLine java8 = parseStackLine("at Main$$Lambda$1/1831932724.run(Unknown Source)");
  ASSERT_EQ(java8.kindName(), "java_frame");
  EXPECT_EQ(asJavaFrame(java8)->class_name, "Main$$Lambda$1/1831932724");
  StackLine form =
      parseStackLine("at java.base/java.lang.invoke.LambdaForm$DMH/0x0000000800c0c400.invokeStatic(LambdaForm$DMH)");
  ASSERT_EQ(form.kindName(), "java_frame");
  EXPECT_EQ(asJavaFrame(form)->module_prefix, "java.base/");
  EXPECT_EQ(asJavaFrame(form)->class_name, "java.lang.invoke.LambdaForm$DMH/0x0000000800c0c400");
  EXPECT_EQ(asJavaFrame(form)->method, "invokeStatic");
  // A module name alone before the number is no class.
  EXPECT_EQ(parseStackLine("at /0x12.run(Unknown Source)").kindName(), "unknown");

  StackLine suppressed = parseStackLine("\tSuppressed: x.y.Z: closing");
  ASSERT_EQ(suppressed.kindName(), "java_exception");
  EXPECT_EQ(asJavaException(suppressed)->prefix, "Suppressed: ");

  StackLine more = parseStackLine("\t... 12 more");
  ASSERT_EQ(more.kindName(), "java_more");
  EXPECT_EQ(asJavaMore(more)->count, 12u);
}

TEST(StackLine, JavaScriptFrames) {
  StackLine chrome = parseStackLine("    at n.capture (https://host/static/js/207.e017fea1.chunk.js:2:3768321)");
  ASSERT_EQ(chrome.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(chrome)->style, JsStyle::kV8);
  EXPECT_EQ(asJsFrame(chrome)->function, "n.capture");
  EXPECT_EQ(asJsFrame(chrome)->url, "https://host/static/js/207.e017fea1.chunk.js");
  EXPECT_EQ(asJsFrame(chrome)->line, 2u);
  EXPECT_EQ(asJsFrame(chrome)->column, 3768321u);

  // node and Electron on Windows print the script's path as it is, spaces and parentheses kept.
  StackLine windows =
      parseStackLine(R"(    at Object.<anonymous> (C:\Program Files (x86)\My App\resources\main.js:12:7))");
  ASSERT_EQ(windows.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(windows)->function, "Object.<anonymous>");
  EXPECT_EQ(asJsFrame(windows)->url, R"(C:\Program Files (x86)\My App\resources\main.js)");
  EXPECT_EQ(asJsFrame(windows)->line, 12u);
  EXPECT_EQ(asJsFrame(windows)->column, 7u);
  // An anonymous function's frame has no parentheses: the file path still ends at ":line:column".
  for (const char* bare : {R"(at C:\Program Files\My App\main.js:12:7)", "at /opt/My App (2)/main.js:12:7"}) {
    StackLine line = parseStackLine(bare);
    ASSERT_EQ(line.kindName(), "js_frame") << bare;
    EXPECT_EQ(asJsFrame(line)->line, 12u);
    EXPECT_EQ(asJsFrame(line)->column, 7u);
  }
  EXPECT_EQ(asJsFrame(parseStackLine("at /opt/My App (2)/main.js:12:7"))->url, "/opt/My App (2)/main.js");
  // Anything else with a space outside parentheses is text, not a frame.
  EXPECT_EQ(parseStackLine("at the time 12:30:45").kindName(), "unknown");
  EXPECT_EQ(parseStackLine("at https://h/a b.js:1:2").kindName(), "unknown");

  StackLine anonymous = parseStackLine("at https://h/app.js:1:20");
  ASSERT_EQ(anonymous.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(anonymous)->function.empty());

  StackLine async_new = parseStackLine("at async new Foo (webpack:///./src/a.js?x=1:10:5)");
  ASSERT_EQ(async_new.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(async_new)->is_async);
  EXPECT_TRUE(asJsFrame(async_new)->is_constructor);
  EXPECT_EQ(asJsFrame(async_new)->function, "Foo");

  StackLine eval = parseStackLine("at eval (eval at run (https://h/a.js:3:9), <anonymous>:1:1)");
  ASSERT_EQ(eval.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(eval)->is_eval);
  EXPECT_EQ(asJsFrame(eval)->url, "https://h/a.js");
  EXPECT_EQ(asJsFrame(eval)->line, 3u);
  // Eval'd code that evals again, as node 20 prints it: the first eval's call is the site.
  for (const char* nested : {"at deep (eval at inner (eval at compile (/srv/ev.js:1:29)), <anonymous>:1:25)",
                             "at eval (eval at inner (eval at compile (/srv/ev.js:1:29)), <anonymous>:1:42)",
                             "at inner (eval at compile (/srv/ev.js:1:29), <anonymous>:1:27)"}) {
    SCOPED_TRACE(nested);
    StackLine line = parseStackLine(nested);
    ASSERT_EQ(line.kindName(), "js_frame");
    EXPECT_TRUE(asJsFrame(line)->is_eval);
    EXPECT_EQ(asJsFrame(line)->url, "/srv/ev.js");
    EXPECT_EQ(asJsFrame(line)->line, 1u);
    EXPECT_EQ(asJsFrame(line)->column, 29u);
  }
  // The eval's site in a file path with parentheses of its own.
  StackLine eval_in_folder =
      parseStackLine(R"(at eval (eval at run (C:\Program Files (x86)\a.js:3:9), <anonymous>:1:1))");
  ASSERT_EQ(eval_in_folder.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(eval_in_folder)->url, R"(C:\Program Files (x86)\a.js)");
  EXPECT_EQ(asJsFrame(eval_in_folder)->column, 9u);
  EXPECT_EQ(parseStackLine("at f (eval at g ), <anonymous>:1:2)").kindName(), "unknown");
  EXPECT_EQ(parseStackLine("at f (eval at g (x:1:2, <anonymous>:1:2)").kindName(), "unknown");

  StackLine firefox = parseStackLine("capture/<@https://h/app.min.js:1:200");
  ASSERT_EQ(firefox.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(firefox)->style, JsStyle::kFirefox);
  EXPECT_EQ(asJsFrame(firefox)->function, "capture/<");

  StackLine jsc = parseStackLine("onPress@index.android.bundle:1:1234");
  ASSERT_EQ(jsc.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(jsc)->url, "index.android.bundle");

  StackLine safari = parseStackLine("global code@https://h/app.js:5");
  ASSERT_EQ(safari.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(safari)->line, 5u);
  EXPECT_EQ(asJsFrame(safari)->column, 0u);

  StackLine builtin = parseStackLine("    at Array.map (<anonymous>)");
  ASSERT_EQ(builtin.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(builtin)->builtin);
  EXPECT_EQ(asJsFrame(builtin)->function, "Array.map");
  EXPECT_EQ(asJsFrame(builtin)->url, "<anonymous>");
  EXPECT_TRUE(asJsFrame(parseStackLine("at JSON.parse (native)"))->builtin);
  // JavaScriptCore's engine code (Safari, React Native on JSC), named or not.
  StackLine jsc_builtin = parseStackLine("forEach@[native code]");
  ASSERT_EQ(jsc_builtin.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(jsc_builtin)->builtin);
  EXPECT_EQ(asJsFrame(jsc_builtin)->function, "forEach");
  EXPECT_EQ(asJsFrame(jsc_builtin)->url, "[native code]");
  EXPECT_TRUE(asJsFrame(parseStackLine("@[native code]"))->builtin);
  EXPECT_FALSE(asJsFrame(chrome)->builtin);

  // V8's Promise combinator waiting on one element: engine code, no position.
  StackLine combinator = parseStackLine("    at async Promise.all (index 1)");
  ASSERT_EQ(combinator.kindName(), "js_frame");
  EXPECT_TRUE(asJsFrame(combinator)->builtin);
  EXPECT_TRUE(asJsFrame(combinator)->is_async);
  EXPECT_EQ(asJsFrame(combinator)->function, "Promise.all");
  EXPECT_EQ(asJsFrame(combinator)->url, "index 1");
  EXPECT_EQ(parseStackLine("at Promise.any (index x)").kindName(), "unknown");

  // SpiderMonkey's async causes: the function keeps the cause as printed, is_async tells.
  for (const char* printed : {"async*main@https://h/a.js:1:40", "promise callback*main@https://h/a.js:1:40",
                              "setTimeout handler*main@https://h/a.js:1:40"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    EXPECT_TRUE(asJsFrame(line)->is_async);
    EXPECT_TRUE(asJsFrame(line)->function.ends_with("*main"));
    EXPECT_EQ(asJsFrame(line)->column, 40u);
  }
  EXPECT_FALSE(asJsFrame(firefox)->is_async);
  // A cause is words: a message with a '*' in it is still no frame.
  EXPECT_EQ(parseStackLine("Error: 2*x@h:1:2").kindName(), "unknown");

  // JavaScriptCore's top-level code of a module or of eval, and code with no URL.
  StackLine module = parseStackLine("module code@https://h/app.js:7:3");
  ASSERT_EQ(module.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(module)->function, "module code");
  EXPECT_EQ(asJsFrame(module)->line, 7u);
  for (const char* printed : {"eval code@", "global code@", "onTick@", "Foo.bar@"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    EXPECT_TRUE(asJsFrame(line)->url.empty());
    EXPECT_EQ(asJsFrame(line)->line, 0u);
    EXPECT_FALSE(asJsFrame(line)->builtin);
  }
  for (const char* other : {"mail me@", "some code@https://h/a.js:1:2", "x(y)@", "@"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }

  // SpiderMonkey's frames of code made at run time, as pythonmonkey 1.4.1 (SpiderMonkey 115)
  // printed them for eval, an eval inside eval'd code, and `new Function`: a frame without a
  // script position (the position is inside the generated code; the call's column is not given).
  for (const char* printed :
       {"inner@https://h/app.js line 2 > eval:1:26", "@https://h/app.js line 2 > eval line 1 > eval:1:44",
        "anonymous@https://h/app.js line 7 > Function:4:3", "promise callback*run@evaluate line 1 > eval:3:9"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    const JsFrameLine* js = asJsFrame(line);
    EXPECT_EQ(js->style, JsStyle::kFirefox);
    EXPECT_TRUE(js->is_eval);
    EXPECT_TRUE(js->url.empty());
    EXPECT_EQ(js->line, 0u);
    EXPECT_FALSE(js->builtin);
  }
  EXPECT_EQ(asJsFrame(parseStackLine("inner@https://h/app.js line 2 > eval:1:26"))->function, "inner");
  // The shells print a script's file path as it is, spaces and " line " included.
  for (const char* printed : {"inner@/opt/My App (x86)/main.js line 2 > eval:1:26",
                              "@C:\\Program Files\\a line b\\main.js line 7 > Function:4:3"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    EXPECT_TRUE(asJsFrame(line)->is_eval);
    EXPECT_EQ(asJsFrame(line)->line, 0u);
  }
  for (const char* printed :
       {"inner@/opt/My App (x86)/main.js:1:35", "global code@/opt/My App/main.js:3:12", "@C:\\My App\\main.js:3:7"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    const std::string_view text(printed);
    const size_t at = text.find('@');
    EXPECT_EQ(asJsFrame(line)->url, text.substr(at + 1, text.rfind(':', text.rfind(':') - 1) - at - 1));
    EXPECT_GT(asJsFrame(line)->line, 0u);
    EXPECT_GT(asJsFrame(line)->column, 0u);
  }
  // A space outside a file path still ends the frame.
  for (const char* other : {"f@https://h/my app.js:1:2", "f@my app.js:1:2", "see me@/opt/app.js:1:2"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }

  // SpiderMonkey names a getter or setter "get g" / "set g" (pythonmonkey 1.4.1 printed
  // "get g@https://h/app.js:3:76" for a class's getter).
  for (const char* printed : {"get g@https://h/app.js:3:76", "set value@https://h/app.js:3:76"}) {
    SCOPED_TRACE(printed);
    StackLine line = parseStackLine(printed);
    ASSERT_EQ(line.kindName(), "js_frame");
    EXPECT_EQ(asJsFrame(line)->style, JsStyle::kFirefox);
    EXPECT_EQ(asJsFrame(line)->function, std::string_view(printed).substr(0, std::string_view(printed).find('@')));
    EXPECT_EQ(asJsFrame(line)->line, 3u);
    EXPECT_EQ(asJsFrame(line)->column, 76u);
  }
  for (const char* other :
       {"get a b@https://h/app.js:3:76", "get @https://h/app.js:3:76", "got g@https://h/app.js:3:76"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }
  EXPECT_TRUE(asJsFrame(parseStackLine("promise callback*run@evaluate line 1 > eval:3:9"))->is_async);
  for (const char* other :
       {"f@https://h/app.js line x > eval:1:2", "f@https://h/app.js line 2 > evil:1:2",
        "f@https://h/app.js line 2 > eval", "f@https://h/app.js line 2 > eval:1", "f@ line 2 > eval:1:2",
        "f@a b line 2 > eval:1:2", "f@https://h/app.js line 2 > eval line > eval:1:2",
        "f@https://h/app.js line 2 > eval:1:2 x"}) {
    EXPECT_EQ(parseStackLine(other).kindName(), "unknown") << other;
  }

  StackLine hermes = parseStackLine("    at render (address at index.android.bundle:1:9876)");
  ASSERT_EQ(hermes.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(hermes)->style, JsStyle::kHermes);
  EXPECT_TRUE(asJsFrame(hermes)->hermes_bytecode);
  EXPECT_EQ(asJsFrame(hermes)->column, 9876u);
}

TEST(StackLine, HermesCrashReportFrames) {
  // One frame of a Hermes crash callstack, as the VM writes it (StackFrameRegOffs quoted).
  StackLine crash =
      parseStackLine(R"(  {"StackFrameRegOffs":"1234","FunctionID":12,"ByteCodeOffset":34,"CJSModuleOffset":2,)"
                     R"("SourceURL":"https://h/index.android.bundle?platform=android"})");
  ASSERT_EQ(crash.kindName(), "js_frame");
  const JsFrameLine* frame = asJsFrame(crash);
  EXPECT_EQ(frame->style, JsStyle::kHermes);
  EXPECT_TRUE(frame->hermes_function_offset);
  EXPECT_EQ(frame->segment_id, 2u);
  EXPECT_EQ(frame->function_id, 12u);
  EXPECT_EQ(frame->bytecode_offset, 34u);
  EXPECT_EQ(frame->url, "https://h/index.android.bundle?platform=android");
  EXPECT_EQ(frame->line, 0u);

  // Newer Hermes says SegmentID; older ones print neither (segment 0) and no SourceURL.
  StackLine segment = parseStackLine(R"({"SegmentID": 3, "FunctionID": 1, "ByteCodeOffset": 0})");
  ASSERT_EQ(segment.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(segment)->segment_id, 3u);
  EXPECT_TRUE(asJsFrame(segment)->url.empty());
  StackLine plain = parseStackLine(R"({"FunctionID":7,"ByteCodeOffset":5,"SourceLocation":"a.js:1:2"})");
  ASSERT_EQ(plain.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(plain)->segment_id, 0u);
  EXPECT_EQ(asJsFrame(plain)->function_id, 7u);

  // Native frames of the callstack are frames without a script position.
  StackLine native = parseStackLine(R"({"StackFrameRegOffs":"12","NativeCode":true})");
  ASSERT_EQ(native.kindName(), "js_frame");
  EXPECT_FALSE(asJsFrame(native)->hermes_function_offset);
  EXPECT_EQ(asJsFrame(native)->url, "native");

  // Not crash frames: missing fields, non-numeric ids, other JSON, broken syntax.
  for (const char* text : {R"({"FunctionID":1})", R"({"FunctionID":"x","ByteCodeOffset":1})", R"({"event_id":"0f8e"})",
                           R"({"FunctionID":1,"ByteCodeOffset":2)", R"({"FunctionID":1 "ByteCodeOffset":2})",
                           R"({"FunctionID":-1,"ByteCodeOffset":2})",
                           R"({"SourceURL":"a\"b","FunctionID":99999999999,"ByteCodeOffset":2})"}) {
    EXPECT_NE(parseStackLine(text).kindName(), "js_frame") << text;
  }
  // Escaped quotes inside strings do not end them.
  StackLine escaped = parseStackLine(R"({"SourceURL":"a\"b.bundle","FunctionID":1,"ByteCodeOffset":2})");
  ASSERT_EQ(escaped.kindName(), "js_frame");
  EXPECT_EQ(asJsFrame(escaped)->function_id, 1u);
}

TEST(StackLine, UnknownAndBlankLines) {
  EXPECT_EQ(parseStackLine("").kindName(), "blank");
  EXPECT_EQ(parseStackLine(" \t\r").kindName(), "blank");
  for (const char* text : {"Thread 0 Crashed:", "backtrace:", "at native code", "pc zzzz libfoo.so",
                           "#xx pc 0000 libc.so", "at a.b(c:d:e)", "0x1234 + 12", "hello world"}) {
    EXPECT_EQ(parseStackLine(text).kindName(), "unknown") << text;
  }
  // Numbers that overflow are not addresses.
  EXPECT_EQ(parseStackLine("pc 0x1ffffffffffffffff libfoo.so").kindName(), "unknown");
}

TEST(StackLine, ParseStackSplitsLinesAndKeepsCarriageReturnsOut) {
  auto lines = parseStack("a.b.c(X.java:1)\r\n\tat d.e.f(Y.java:2)\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].raw, "a.b.c(X.java:1)");
  EXPECT_EQ(lines[1].kindName(), "java_frame");
}

TEST(StackLine, NormalizeDebugId) {
  EXPECT_EQ(normalizeDebugId("8C17697F-2E84-39E5-B491-FCF5169106FF"), "8c17697f2e8439e5b491fcf5169106ff");
  EXPECT_EQ(normalizeDebugId("not-hex"), "");
}

// Deterministic fuzzing of the line parsers: random and mutated lines must never crash and must
// always come back with the raw text intact.
// `line` after `edits` random edits: a byte replaced by one of `alphabet`, 1 to `max_erase` bytes
// erased, or one of `alphabet` inserted.
std::string mutated(std::string line, int edits, const std::string& alphabet, size_t max_erase, std::mt19937& random) {
  for (int e = 0; e < edits && !line.empty(); ++e) {
    const size_t at = random() % line.size();
    switch (random() % 3) {
      case 0:
        line[at] = alphabet[random() % alphabet.size()];
        break;
      case 1:
        line.erase(at, 1 + random() % max_erase);
        break;
      default:
        line.insert(at, 1, alphabet[random() % alphabet.size()]);
    }
  }
  return line;
}

// lineSyntaxes() tries Java frames before JavaScript ones on the grounds that no line is both
// (line_syntaxes.cc). Real lines of both and mutations of them (the bytes that tell them apart:
// brackets, spaces, ':', '@') must never be read by both readers.
TEST(StackLine, JavaAndJavaScriptFramesNeverReadTheSameLine) {
  const std::vector<std::string> seeds = {
      "at a.b.c(SourceFile:12)",
      "at a.b.c (SourceFile:12)",
      "at a.b.c (Native method)",
      "at com.x.Foo$Bar.<init>(Foo.java:3)",
      "at app//a.b.c(Unknown Source)",
      "at java.base@17/java.lang.Thread.run(Thread.java:833)",
      "at n.capture (https://h/static/js/207.e017fea1.chunk.js:2:3768321)",
      "at async Promise.all (index 0)",
      "at new Foo (http://h/a.js:1:2)",
      R"(at f (C:\Program Files\App\main.js:1:2))",
      "at eval (eval at fn (http://h/a.js:1:2), <anonymous>:1:3)",
      "at Array.map (<anonymous>)",
      "at fn (address at index.android.bundle:1:9876)",
      "at http://h/a(b).js:1:2",
      "capture@https://h/app.js:1:200",
      "forEach@[native code]",
      "global code@http://h/a.js:3:4",
      "promise callback*run@http://h/a.js:3:4",
      "eval code@",
      "inner@https://h/app.js line 2 > eval line 1 > Function:1:26",
      "at Main$$Lambda$1/1831932724.run(Unknown Source)",
      "at java.base/java.lang.invoke.LambdaForm$DMH/0x0000000800c0c400.invokeStatic(LambdaForm$DMH)",
      R"({"CJSModuleOffset":0,"FunctionID":12,"ByteCodeOffset":34,"SourceURL":"index.android.bundle"})"};
  std::mt19937 random(4321);
  const std::string alphabet = "0123456789ab:@()[]{}. /<>$-\"";
  size_t java = 0, js = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string line = seeds[random() % seeds.size()];
    const int edits = random() % 5;
    line = mutated(std::move(line), edits, alphabet, 3, random);
    const bool is_java = parseJavaFrameLine(line).has_value();
    const bool is_js = parseJsFrameLine(line).has_value();
    java += is_java;
    js += is_js;
    ASSERT_FALSE(is_java && is_js) << "read as both a Java and a JavaScript frame: " << line;
  }
  // Both readers accepted many of the lines, so the check above had something to check.
  EXPECT_GT(java, 5000u);
  EXPECT_GT(js, 10000u);
}

TEST(StackLine, RandomAndMutatedLinesNeverCrash) {
  const std::vector<std::string> seeds = {
      "MDAP  0x00000001079b59d3 0x1079b3000 + 10707 [8c17697f-2e84-39e5-b491-fcf5169106ff]",
      "#00 pc 000000000004a6c8  /system/lib64/libc.so (abort+164) (BuildId: 1f2e)",
      "\tat a.b.c(SourceFile:12)",
      "Caused by: a.b: m",
      "at fn (address at x.bundle:1:2)",
      "f@u:1:2",
      "  native: #01 pc 0000000000012d4c  /system/lib64/libutils.so (android::Looper::pollOnce+180)",
      "  - waiting to lock <0x0a1b2c3d> (a a.b.c) held by thread 12",
      "\"main\" prio=5 tid=1 Blocked",
      "  | group=\"main\" sCount=1",
      "promise callback*run@https://h/a.js:1:2",
      "at a.b.c (SourceFile:12)"};
  std::mt19937 random(1234);
  const std::string alphabet = "0123456789abcdefx:@()[]#+. \t/<>$-\"";
  for (int i = 0; i < 20000; ++i) {
    std::string line = seeds[random() % seeds.size()];
    const int edits = 1 + random() % 6;
    line = mutated(std::move(line), edits, alphabet, 4, random);
    StackLine parsed = parseStackLine(line);
    EXPECT_EQ(parsed.raw, line);
  }
}

}  // namespace
}  // namespace restack::stack
