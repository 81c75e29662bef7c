// Sources compiled at test time. No system headers: the Android and iOS targets have no SDK here.
#pragma once

namespace restack::native_test {

// C++: templates, lambdas, namespaces, heavy inlining at -O2.
inline constexpr const char* kCxxSource = R"CXX(
namespace shapes {
template <typename T, int N>
struct Ring {
  T items[N];
  int head = 0;
  inline void push(T value) { items[head++ % N] = value * 3 + 1; }
  inline T sum() const {
    T total = 0;
    for (int i = 0; i < N; ++i) total += items[i] ^ (total >> 3);
    return total;
  }
};
static inline int mix(int a, int b) { return (a * 31) ^ (b + 7); }
template <typename F>
__attribute__((noinline)) int apply(F f, int x) { return f(x) + mix(x, 3); }

struct Base {
  virtual ~Base() {}
  virtual long area(long scale) const = 0;
};
struct Square : Base {
  long side;
  explicit Square(long s) : side(s) {}
  long area(long scale) const override { return side * side * scale + mix(int(side), 1); }
};
}  // namespace shapes

extern "C" int crash_here(volatile int* p) { return *p; }

__attribute__((noinline)) long compute(int n) {
  shapes::Ring<long, 8> ring;
  for (int i = 0; i < n; ++i) ring.push(shapes::mix(i, n));
  return ring.sum() + shapes::apply([n](int v) { return v * n; }, n);
}

__attribute__((noinline)) long useShape(const shapes::Base& shape, long k) {
  return shape.area(k) + compute(int(k));
}

int entry(int n) {
  shapes::Square square(n);
  return int(useShape(square, n)) + shapes::apply([](int v) { return v - 1; }, n);
}
)CXX";

// C at -O3: static inline helpers nested three deep, a loop the vectorizer likes.
inline constexpr const char* kCSource = R"C(
static inline int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int scale(int v, int f) { return clamp(v * f, -1000, 1000); }
static inline int blend(int a, int b) { return scale(a, 3) + scale(b, 5); }

__attribute__((noinline)) int reduce(const int* data, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += blend(data[i], data[n - 1 - i]);
  return total;
}

int c_entry(int* data, int n) {
  for (int i = 0; i < n; ++i) data[i] = blend(i, n - i);
  return reduce(data, n);
}
)C";

// Objective-C without Foundation: a root class, class and instance methods, a category.
inline constexpr const char* kObjcSource = R"OBJC(
__attribute__((objc_root_class))
@interface Widget { int x; }
- (int)render;
- (int)resize:(int)width height:(int)height;
+ (int)count;
@end
@implementation Widget
- (int)render { return x + 1; }
- (int)resize:(int)width height:(int)height { return x * width + height * 3; }
+ (int)count { return 42; }
@end
@interface Widget (Debug)
- (int)dump;
@end
@implementation Widget (Debug)
- (int)dump { return x - 7; }
@end
)OBJC";

}  // namespace restack::native_test
