// Native frames (iOS images, Android .so): restored line by line by symbolstore/native, printed
// as atos / llvm-symbolizer print them: "main (in MDAP_testDemo9) (main.m:23)".
#pragma once

#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {

const StackKind& nativeKind();

}  // namespace restack::pipeline
