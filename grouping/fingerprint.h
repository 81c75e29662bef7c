// The grouping fingerprint (docs/design.md §6, issue 6 step 3).
//
// Algorithm "v2" (docs/grouping.md says why each step is there):
//   1. Annotate every frame of every stack: normalized name (normalize.h), in-app decision
//      (in_app.h), and whether it is ignored (no restored name, compiler-generated frame,
//      app `ignore` rule, throw/abort/crash-handler/thread-entry noise, direct recursion). A
//      lambda whose enclosing function is deeper on the same stack gets its distance in lines
//      from it ("a.Cart.lambda$total@+1").
//   2. The exception: the event's own, else the first of the chain read from the trace text
//      (exception_text.h: Java first line, JS "TypeError: …", Apple / Android reason lines).
//   3. A matching app `fingerprint` rule forces the group: components ["v2", "forced", name].
//   4. Pick the stack: crash/error -> the crashed thread (else main, else first); for a Java
//      chain, the innermost "Caused by" with in-app frames (its type and message win: wrappers
//      and "Suppressed:" exceptions never enter the hash);
//      anr -> the main thread; lag -> the samples (below).
//   5. Components: ["v2", platform, family, exception type (crash/error only; Apple / Android
//      reasons as their Mach exception or signal, nativeReasonKey), source, names…] with
//      family exception|anr|lag and source, in fallback order:
//        in_app  the top `in_app_frames` in-app names (innermost first),
//        thrower the in-app names are all lambdas / anonymous functions / entry points
//                (isDistinctiveName): the top `fallback_frames` frames below them, from the
//                one that threw, then the in-app names,
//        all     no in-app frame: the top `fallback_frames` names,
//        message no usable frame: the first message line with numbers/ids masked,
//        type    nothing else.
//   6. hash = first 16 bytes of SHA-256 over the components, each written as "<len>:<bytes>",
//      as 32 lowercase hex digits.
// Lag: each sample's in-app path is read root first; starting at the root, the path descends
// into the child seen in the most samples while that child is in more than `lag_min_share` of
// the samples that show in-app frames at all (idle samples do not vote). The innermost
// `in_app_frames` names of that hot path are hashed, and its share of all samples is reported
// (lag_share). With no majority even at the root, the most common innermost key wins.
// Quality: "complete" unless a frame that misses symbols could still change the result
// ("partial" for frame-based fingerprints, "provisional" for message/type fallbacks).
//
// Worked example: an NPE thrown in com.a.Cart.load called from com.a.CartActivity.onResume
// (android.* frames between them) hashes ["v2","android","exception","java.lang.NullPointerException",
// "in_app","com.a.Cart.load","com.a.CartActivity.onResume"].
#pragma once

#include <string>
#include <vector>

#include "grouping/model.h"
#include "grouping/rules.h"

namespace restack::grouping {

// Pure and deterministic: the same input and config always give the same record.
Fingerprint computeFingerprint(const GroupingInput& input, const GroupingConfig& config);

// 32 hex digits: SHA-256 over "<len>:<component>" for every component, first 16 bytes.
std::string hashComponents(const std::vector<std::string>& components);

// Kafka key for restack.fingerprints and restack.events.symbolicated: "<app>:<hash>".
std::string fingerprintKey(const GroupingInput& input, const Fingerprint& fingerprint);

}  // namespace restack::grouping
