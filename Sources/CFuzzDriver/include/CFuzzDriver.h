#ifndef C_FUZZ_DRIVER_H
#define C_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with their own main (linked only in `-sanitize=fuzzer` builds).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
