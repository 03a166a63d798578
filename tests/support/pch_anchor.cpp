// The one source of r3fuzz_test_pch (tests/CMakeLists.txt): CMake builds a precompiled header
// only for a target with sources, and every test suite reuses the header this target builds.
