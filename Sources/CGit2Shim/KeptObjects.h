#ifndef COHORT_KEPT_OBJECTS_H
#define COHORT_KEPT_OBJECTS_H

#include <stddef.h>
#include <git2.h>

// Trees kept between repository handles by a process that verifies push after push (`KeptObjects.c`).

#define KEPT_KEY_BYTES 36   // the repository's identity (16 bytes), then the object's id (20)

// Whether objects are kept at all (`cohort_pack_objects_keep` was given a size).
int cohort_kept_objects_on(void);

// A copy of the object `key` names, in memory from `allocate` (size + 1 bytes asked), or NULL when it
// is not kept (or `allocate` fails).
unsigned char *cohort_kept_object(const unsigned char key[KEPT_KEY_BYTES], size_t *size, git_object_t *type,
                                  unsigned char *(*allocate)(void *context, size_t size), void *context);

// Keeps a copy of `data` under `key`, within the bound.
void cohort_keep_object(const unsigned char key[KEPT_KEY_BYTES], const unsigned char *data, size_t size, git_object_t type);

#endif
