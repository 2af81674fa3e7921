//===- CodeFileTestLibrary.cpp - A library for CodeFileTest to dlopen -----===//

extern "C" int flyCodeFileTestFunction() { return 42; }
