#ifndef COHORT_PACK_INDEXER_H
#define COHORT_PACK_INDEXER_H

#include <stddef.h>
#include <git2.h>

// Cohort's own indexer of a clone's pack (PackIndexer.c), driven by the copy's writer (PackTee.c);
// not for Swift. It reads the pack where the copy keeps it.

typedef struct cohort_pack_indexer cohort_pack_indexer;

/// Hears of each object the indexer names, with its type, name and bytes (valid during the call).
typedef void (*cohort_pack_named)(void *context, int type, const unsigned char *id, const unsigned char *bytes, size_t size);

/// A new indexer for one pack, telling `named` of each object it names; NULL when memory is refused.
cohort_pack_indexer *cohort_pack_indexer_new(cohort_pack_named named, void *context);

/// Lowers the indexer's bounds: at most `entries` entries (a pack declaring more is declined), and
/// at most `kept` bytes inflated in the first pass kept for the second (0: none, where no second pass
/// will run).
void cohort_pack_indexer_limit(cohort_pack_indexer *indexer, uint32_t entries, size_t kept);

/// A fetch's progress callback, called as libgit2's indexer calls it.
void cohort_pack_indexer_report_to(cohort_pack_indexer *indexer, git_indexer_progress_cb progress, void *payload);

void cohort_pack_indexer_free(cohort_pack_indexer *indexer);

/// Reads the entries of `pack[0..length)` not read yet (an entry cut off by the end of what arrived
/// is read on a later call). 0 going on; 1 when the indexer declines the pack (anything it does not
/// read as git writes it, or past its bounds: libgit2's indexer then takes all of it); a negative
/// libgit2 code when the progress callback stopped the transfer.
int cohort_pack_indexer_advance(cohort_pack_indexer *indexer, const unsigned char *pack, size_t length,
                                git_indexer_progress *stats);

/// Once the whole pack has arrived: resolves its deltas, names every object, and writes the pack and
/// its index into `pack_folder` as libgit2's indexer would (NULL: only names them). 0 written; 1
/// declined (nothing written); a negative libgit2 code when the progress callback stopped it.
int cohort_pack_indexer_finish(cohort_pack_indexer *indexer, const unsigned char *pack, size_t length,
                               const char *pack_folder, git_indexer_progress *stats);

#endif
