// Declarations only: libFuzzer itself provides LLVMFuzzerRunDriver when built with -sanitize=fuzzer.
#include "CFuzzDriver.h"
