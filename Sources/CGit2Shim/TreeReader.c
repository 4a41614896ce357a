// Trees read and parsed by Cohort for its walks (see CGit2Shim.h).
//
// libgit2's own parse of a tree costs about 330 instructions an entry (most of them reading the mode
// with a general-purpose number parser) and an allocation per tree object, and every entry it hands
// out is reached through a call into the library: the verification's walks read tens of thousands of
// trees. Here the entries of a tree in git's usual form are read in one pass over the object's bytes.
// A tree in any other form goes to libgit2, whose entries are copied: what libgit2 refuses stays
// refused with libgit2's own error, and what it reads is read as it reads it.

#include "CGit2Shim.h"

#include <stdlib.h>
#include <string.h>

struct cohort_tree {
    git_odb_object *object;  // the bytes the entries point into, or NULL
    git_tree *parsed;        // or libgit2's parse, when the tree is not in the usual form
    size_t count;
    cohort_tree_entry *entries;
};

// The usual form, as git writes it: a mode of 1 to 6 octal digits, a space, a name of 1 to 65,535
// bytes ending in a zero byte, then 20 bytes of id; for such entries libgit2 reads the same mode, name
// and id (`git_tree__parse_raw`). Returns -1 on anything else, leaving the tree to libgit2.
static int read_usual(const unsigned char *data, size_t size, cohort_tree_entry *entries, size_t *count) {
    const unsigned char *at = data, *end = data + size;
    size_t found = 0;
    while (at < end) {
        uint32_t mode = 0;
        size_t digits = 0;
        // The two modes nearly every entry has, read at once.
        if (end - at > 7 && memcmp(at, "100644 ", 7) == 0) {
            mode = 0100644;
            at += 6;
            digits = 6;
        } else if (end - at > 6 && memcmp(at, "40000 ", 6) == 0) {
            mode = 040000;
            at += 5;
            digits = 5;
        } else {
            while (at < end && *at >= '0' && *at <= '7' && digits <= 6) {
                mode = mode * 8 + (uint32_t)(*at - '0');
                at++;
                digits++;
            }
        }
        if (digits == 0 || digits > 6 || mode > UINT16_MAX || at >= end || *at != ' ') return -1;
        at++;
        const unsigned char *nul = memchr(at, 0, (size_t)(end - at));
        if (nul == NULL) return -1;
        size_t length = (size_t)(nul - at);
        if (length == 0 || length > UINT16_MAX || (size_t)(end - nul - 1) < GIT_OID_RAWSZ) return -1;
        entries[found].name = (const char *)at;
        entries[found].id = nul + 1;
        entries[found].name_length = (uint16_t)length;
        entries[found].mode = (uint16_t)mode;
        found++;
        at = nul + 1 + GIT_OID_RAWSZ;
    }
    *count = found;
    return 0;
}

// The tree as libgit2 reads it, its entries copied (they point into libgit2's tree, kept with them).
static int read_with_libgit2(cohort_tree *tree, git_repository *repository, const git_oid *id) {
    int error = git_tree_lookup(&tree->parsed, repository, id);
    if (error < 0) return error;
    size_t count = git_tree_entrycount(tree->parsed);
    tree->entries = malloc(sizeof(cohort_tree_entry) * (count ? count : 1));
    if (tree->entries == NULL) {
        git_error_set_oom();
        return -1;
    }
    for (size_t index = 0; index < count; index++) {
        const git_tree_entry *entry = git_tree_entry_byindex(tree->parsed, index);
        const char *name = git_tree_entry_name(entry);
        tree->entries[index].name = name;
        tree->entries[index].id = git_tree_entry_id(entry)->id;
        tree->entries[index].name_length = (uint16_t)strlen(name);  // libgit2 reads at most 65,535 bytes
        tree->entries[index].mode = (uint16_t)git_tree_entry_filemode_raw(entry);
    }
    tree->count = count;
    return 0;
}

int cohort_tree_read(cohort_tree **out, git_repository *repository, const git_oid *id) {
    *out = NULL;
    cohort_tree *tree = calloc(1, sizeof(cohort_tree));
    if (tree == NULL) {
        git_error_set_oom();
        return -1;
    }
    git_odb *odb = NULL;
    if (git_repository_odb(&odb, repository) == 0 && git_odb_read(&tree->object, odb, id) == 0 &&
        git_odb_object_type(tree->object) == GIT_OBJECT_TREE) {
        size_t size = git_odb_object_size(tree->object);
        // Each entry takes at least 24 bytes ("0 a", its zero byte and its id).
        tree->entries = malloc(sizeof(cohort_tree_entry) * (size / 24 + 1));
        if (tree->entries != NULL &&
            read_usual(git_odb_object_data(tree->object), size, tree->entries, &tree->count) == 0) {
            git_odb_free(odb);
            *out = tree;
            return 0;
        }
        free(tree->entries);
        tree->entries = NULL;
    }
    git_odb_free(odb);
    git_odb_object_free(tree->object);
    tree->object = NULL;
    int error = read_with_libgit2(tree, repository, id);
    if (error < 0) {
        cohort_tree_free(tree);
        return error;
    }
    *out = tree;
    return 0;
}

void cohort_tree_free(cohort_tree *tree) {
    if (tree == NULL) return;
    free(tree->entries);
    git_odb_object_free(tree->object);
    git_tree_free(tree->parsed);
    free(tree);
}

size_t cohort_tree_count(const cohort_tree *tree) {
    return tree ? tree->count : 0;
}

const cohort_tree_entry *cohort_tree_entry_at(const cohort_tree *tree, size_t index) {
    return tree && index < tree->count ? &tree->entries[index] : NULL;
}

/* git's order of two tree entries' names: bytewise, a folder's name as if it ended in '/'. */
static int entry_order(const char *a, size_t a_length, int a_tree, const char *b, size_t b_length, int b_tree) {
    size_t length = a_length < b_length ? a_length : b_length;
    int order = memcmp(a, b, length);
    if (order != 0) return order;
    unsigned char a_next = length < a_length ? (unsigned char)a[length] : (a_tree ? '/' : 0);
    unsigned char b_next = length < b_length ? (unsigned char)b[length] : (b_tree ? '/' : 0);
    return (int)a_next - (int)b_next;
}

static int order_of(const cohort_tree_entry *a, const cohort_tree_entry *b) {
    return entry_order(a->name, a->name_length, cohort_tree_entry_is_tree(a), b->name, b->name_length, cohort_tree_entry_is_tree(b));
}

size_t cohort_tree_differences(const cohort_tree *old, const cohort_tree *new, cohort_tree_pair *pairs, size_t capacity) {
    size_t old_count = cohort_tree_count(old), new_count = cohort_tree_count(new);
    size_t i = 0, j = 0, found = 0;
    while (i < old_count || j < new_count) {
        const cohort_tree_entry *before = i < old_count ? &old->entries[i] : NULL;
        const cohort_tree_entry *after = j < new_count ? &new->entries[j] : NULL;
        // Most entries are the same in both trees: the same id, mode and name.
        if (before && after && memcmp(before->id, after->id, GIT_OID_RAWSZ) == 0 && before->mode == after->mode &&
            before->name_length == after->name_length && memcmp(before->name, after->name, before->name_length) == 0) {
            i++;
            j++;
            continue;
        }
        int order = before == NULL ? 1 : after == NULL ? -1 : order_of(before, after);
        cohort_tree_pair pair = {-1, -1};
        if (order == 0) {
            if (memcmp(before->id, after->id, GIT_OID_RAWSZ) == 0 &&
                cohort_tree_entry_filemode(before) == cohort_tree_entry_filemode(after)) {
                i++;
                j++;
                continue;
            }
            pair.old_index = (int64_t)i++;
            pair.new_index = (int64_t)j++;
        } else if (order < 0) {
            pair.old_index = (int64_t)i++;
        } else {
            pair.new_index = (int64_t)j++;
        }
        if (found < capacity) pairs[found] = pair;
        found++;
    }
    return found;
}

/* Whether one of the first `count` entries of `tree`, strictly in order, is a file named `name`. */
static int names_file(const cohort_tree *tree, size_t count, const char *name, size_t length) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const cohort_tree_entry *entry = &tree->entries[middle];
        int order = entry_order(entry->name, entry->name_length, cohort_tree_entry_is_tree(entry), name, length, 0);
        if (order == 0) return 1;
        if (order < 0) low = middle + 1; else high = middle;
    }
    return 0;
}

int64_t cohort_tree_misordered_entry(const cohort_tree *tree) {
    size_t count = cohort_tree_count(tree);
    for (size_t index = 1; index < count; index++) {
        const cohort_tree_entry *before = &tree->entries[index - 1], *after = &tree->entries[index];
        if (order_of(before, after) >= 0) return (int64_t)index;
        /* In that order a name comes twice only as a file before a folder, and every entry between
           them starts with the name: the earlier entries are searched only when the last one does. */
        if (cohort_tree_entry_is_tree(after) && before->name_length >= after->name_length &&
            memcmp(before->name, after->name, after->name_length) == 0 &&
            names_file(tree, index, after->name, after->name_length)) return (int64_t)index;
    }
    return -1;
}
