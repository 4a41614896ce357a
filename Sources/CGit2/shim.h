#ifndef COHORT_CGIT2_H
#define COHORT_CGIT2_H
#include <git2.h>
#include <git2/sys/repository.h>
#endif
