#include <gtest/gtest.h>
TEST(SourcemapTools, Placeholder) {}
