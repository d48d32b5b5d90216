/* What every fuzz target defines: libFuzzer's entry point. The same targets
 * build two ways (tests/fuzz/README.md): with clang's -fsanitize=fuzzer, and
 * with replay_main.c, a plain-C main that runs saved inputs through them so
 * the corpus and the regression inputs are executed by any compiler. */
#ifndef TELESCOPE_FUZZ_H
#define TELESCOPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A target-side check that holds for every input: aborts (so libFuzzer and
 * the replay driver both report the input) with the condition and place. */
#define FUZZ_ASSERT(cond)                                                             \
  do {                                                                                \
    if (!(cond)) fuzz_fail(#cond, __FILE__, __LINE__);                                \
  } while (0)

#include <stdio.h>
#include <stdlib.h>
static inline void fuzz_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
  abort();
}

#endif
